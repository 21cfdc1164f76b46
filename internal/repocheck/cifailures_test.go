// SPDX-License-Identifier: Apache-2.0

package repocheck

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestCIFailureSummary: .ci/failures.awk, which .ci/run prints at the end of a failed step,
// finds the reason of a failure in go test's output with -v (parallel tests, their logs
// interleaved under === NAME) and without, after a timeout panic, and in build and lint output.
func TestCIFailureSummary(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	script := filepath.Join(filepath.Dir(file), "..", "..", ".ci", "failures.awk")
	tests := []struct {
		name, output, want string
	}{{
		name: "verbose, parallel, a long log after the reason",
		output: `=== RUN   TestOutage
=== PAUSE TestOutage
=== RUN   TestOther
    other_test.go:10: fine
--- PASS: TestOther (1.00s)
=== CONT  TestOutage
=== RUN   TestOutage/xray
=== RUN   TestOutage/logs
=== NAME  TestOutage/xray
    xray_test.go:102: a record: not within 30s
    kubecluster.go:142: kubecluster: the server's log ends with:
        I1129 11:09:55.736707   25998 tlsconfig.go:258] "Shutting down"
        {"level":"error","caller":"embed/etcd.go:912","msg":"failed"}
=== NAME  TestOutage/logs
    outage_test.go:34: every line stored
--- FAIL: TestOutage (660.48s)
    --- FAIL: TestOutage/xray (609.14s)
    --- PASS: TestOutage/logs (660.48s)
FAIL
`,
		want: `--- TestOutage/xray: its last lines
    xray_test.go:102: a record: not within 30s
    kubecluster.go:142: kubecluster: the server's log ends with:
`,
	}, {
		name: "without -v: the lines follow --- FAIL",
		output: `--- FAIL: TestA (0.01s)
    a_test.go:10: first
    a_test.go:11: second
--- FAIL: TestB (0.00s)
    --- FAIL: TestB/sub (0.00s)
        b_test.go:5: sub failed
FAIL
FAIL	example.com/pkg	0.1s
`,
		want: `--- TestA: its last lines
    a_test.go:10: first
    a_test.go:11: second
--- TestB/sub: its last lines
        b_test.go:5: sub failed
`,
	}, {
		name:   "the last eight lines of a test that logged more",
		output: "--- FAIL: TestLong (1.00s)\n" + strings.Repeat("    long_test.go:7: progress\n", 20) + "    long_test.go:9: the reason\n",
		want:   "--- TestLong: its last lines\n" + strings.Repeat("    long_test.go:7: progress\n", 7) + "    long_test.go:9: the reason\n",
	}, {
		name: "a timeout names the tests that were running",
		output: `=== RUN   TestSlow
panic: test timed out after 10m0s
	running tests:
		TestSlow (10m0s)

goroutine 1 [running]:
	/src/slow_test.go:12 +0x1
`,
		want: "panic: test timed out after 10m0s\n\trunning tests:\n\t\tTestSlow (10m0s)\n",
	}, {
		name: "build and lint findings",
		output: `# example.com/pkg [example.com/pkg.test]
./a_test.go:12:3: undefined: foo
exporter/x.go:33:1: exported function lacks a comment (revive)
`,
		want: `--- build, vet or lint findings (the first 20):
./a_test.go:12:3: undefined: foo
exporter/x.go:33:1: exported function lacks a comment (revive)
`,
	}, {
		name:   "nothing failed: nothing printed",
		output: "=== RUN   TestA\n    a_test.go:3: fine\n--- PASS: TestA (0.00s)\nok  \texample.com/pkg\t0.1s\n",
		want:   "",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command("awk", "-f", script)
			cmd.Stdin = strings.NewReader(tt.output)
			got, err := cmd.Output()
			if err != nil {
				t.Fatalf("awk -f .ci/failures.awk: %v", err)
			}
			if string(got) != tt.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}
