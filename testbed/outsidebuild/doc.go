// SPDX-License-Identifier: Apache-2.0

// Package outsidebuild holds the proof that the components are importable: a collector built
// elsewhere by ocb from the repository's released modules at their version, served by a
// file-based module proxy, with no replace lines (`make test-modules` runs it).
package outsidebuild
