// SPDX-License-Identifier: Apache-2.0

// Package repocheck holds the tests that keep the repository's own rules: every Go file carries
// its license identifier, no large binary is tracked, and no component module requires another
// component module.
package repocheck
