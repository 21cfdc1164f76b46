// SPDX-License-Identifier: Apache-2.0

//go:build !linux

package binarypages

// Release is not supported outside Linux.
func Release() (int64, error) {
	return 0, ErrUnsupported
}
