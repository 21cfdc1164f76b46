// SPDX-License-Identifier: Apache-2.0

// Package testenv reads the paths `make test-modules` gives the tests of testbed/install.
package testenv

import (
	"os"
	"testing"
)

// Path returns the value of the environment variable name. Without it the test is skipped,
// or fails under CI=true, with how (the make target that provides it).
func Path(t testing.TB, name, how string) string {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		msg := name + " is not set: " + how
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return v
}
