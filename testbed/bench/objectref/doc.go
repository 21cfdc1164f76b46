// SPDX-License-Identifier: Apache-2.0

// Package objectref measures the object_ref processor against the klog parser on the same
// records, and checks that the text and JSON lines of one klog call end up with the same
// references after both processors.
package objectref
