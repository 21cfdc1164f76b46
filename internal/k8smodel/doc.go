// SPDX-License-Identifier: Apache-2.0

// Package k8smodel is the project's one data model: how a Kubernetes object is referred to
// (package objref) and every attribute name the project's components write (package attr).
// Components import it instead of spelling names or parsing references themselves.
package k8smodel
