// SPDX-License-Identifier: Apache-2.0

package objecttrace_test

import (
	"os"
	"strings"
	"testing"
)

// TestReadmeExample keeps the README's Go example the compiled, checked Example of
// example_test.go: the README shows that file from its package clause on.
func TestReadmeExample(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	example, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(readme), "```go\n")
	if !ok {
		t.Fatal("README.md has no Go example")
	}
	block, _, _ = strings.Cut(block, "```")
	_, code, _ := strings.Cut(string(example), "package objecttrace_test\n")
	if want := "package objecttrace_test\n" + code; block != want {
		t.Errorf("README.md's Go example differs from example_test.go; replace it with the file from its package clause on:\n%s", want)
	}
}
