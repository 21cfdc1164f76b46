// SPDX-License-Identifier: Apache-2.0

package repocheck

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// resultsMarker opens the current-results table of testbed/BENCHMARKS.md.
const resultsMarker = "<!-- current-results"

// readmeTableHeader opens the README's "How fast" table.
const readmeTableHeader = "| component | compared with | result |"

// TestReadmeMatchesBenchmarks keeps the README's "How fast" table equal to the first three
// columns of the current-results table in testbed/BENCHMARKS.md, row for row.
func TestReadmeMatchesBenchmarks(t *testing.T) {
	root, _ := trackedFiles(t)
	bench, err := os.ReadFile(filepath.Join(root, "testbed", "BENCHMARKS.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	current, err := tableAfter(string(bench), resultsMarker)
	if err != nil {
		t.Fatalf("testbed/BENCHMARKS.md: %v", err)
	}
	shown, err := tableAfter(string(readme), readmeTableHeader)
	if err != nil {
		t.Fatalf("README.md: %v", err)
	}
	if len(current) < 5 {
		t.Fatalf("testbed/BENCHMARKS.md's current results have %d rows; the table was not found whole", len(current))
	}
	for _, row := range current {
		if len(row) < 6 || row[3] == "" || row[4] == "" {
			t.Errorf("BENCHMARKS row %q lacks its command or date", row[0])
		}
	}
	if diff := compareRows(current, shown); diff != "" {
		t.Error(diff)
	}
}

func TestCompareRows(t *testing.T) {
	bench := [][]string{{"a", "b", "c", "cmd", "date", "m"}, {"d", "e", "f", "cmd", "date", "m"}}
	cases := []struct {
		name   string
		readme [][]string
		ok     bool
	}{
		{"equal", [][]string{{"a", "b", "c"}, {"d", "e", "f"}}, true},
		{"number differs", [][]string{{"a", "b", "c"}, {"d", "e", "g"}}, false},
		{"row missing", [][]string{{"a", "b", "c"}}, false},
		{"row added", [][]string{{"a", "b", "c"}, {"d", "e", "f"}, {"x", "y", "z"}}, false},
		{"order differs", [][]string{{"d", "e", "f"}, {"a", "b", "c"}}, false},
	}
	for _, tc := range cases {
		got := compareRows(bench, tc.readme) == ""
		if got != tc.ok {
			t.Errorf("%s: compareRows ok = %v, want %v", tc.name, got, tc.ok)
		}
	}
}

func TestTableAfter(t *testing.T) {
	doc := "intro\n\n| h1 | h2 |\n|---|---|\n| `x` | 1.5x \\| more |\n| y | 2 |\n\nafter\n| z | 3 |\n"
	rows, err := tableAfter(doc, "intro")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0][0] != "`x`" || rows[1][1] != "2" {
		t.Fatalf("rows = %q", rows)
	}
	if _, err := tableAfter(doc, "missing"); err == nil {
		t.Fatal("a missing marker gave no error")
	}
}

// compareRows says how the README's rows differ from the first three columns of the
// benchmark rows, or "" when they are the same rows in the same order.
func compareRows(bench, readme [][]string) string {
	var b strings.Builder
	if len(bench) != len(readme) {
		b.WriteString("README's How fast table and testbed/BENCHMARKS.md's current results differ in rows:\n")
	}
	for i := 0; i < max(len(bench), len(readme)); i++ {
		var want, got []string
		if i < len(bench) {
			want = bench[i][:min(3, len(bench[i]))]
		}
		if i < len(readme) {
			got = readme[i]
		}
		if strings.Join(want, " | ") != strings.Join(got, " | ") {
			b.WriteString("row " + strconv.Itoa(i+1) + ":\n  BENCHMARKS: " + strings.Join(want, " | ") + "\n  README:     " + strings.Join(got, " | ") + "\n")
		}
	}
	return b.String()
}

// tableAfter returns the data rows (header and separator dropped) of the first Markdown table
// at or after marker, each as its trimmed cells.
func tableAfter(doc, marker string) ([][]string, error) {
	i := strings.Index(doc, marker)
	if i < 0 {
		return nil, errNotFound(marker)
	}
	var rows [][]string
	started := false
	for _, line := range strings.Split(doc[i:], "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "|") {
			if started {
				break
			}
			continue
		}
		started = true
		rows = append(rows, splitRow(line))
	}
	if len(rows) < 2 {
		return nil, errNotFound("a table after " + marker)
	}
	return rows[2:], nil
}

// splitRow splits a Markdown table row into trimmed cells; `\|` stays inside a cell.
func splitRow(line string) []string {
	line = strings.TrimSuffix(strings.TrimPrefix(line, "|"), "|")
	var cells []string
	var cur strings.Builder
	for j := 0; j < len(line); j++ {
		if line[j] == '\\' && j+1 < len(line) && line[j+1] == '|' {
			cur.WriteString(`\|`)
			j++
			continue
		}
		if line[j] == '|' {
			cells = append(cells, strings.TrimSpace(cur.String()))
			cur.Reset()
			continue
		}
		cur.WriteByte(line[j])
	}
	return append(cells, strings.TrimSpace(cur.String()))
}

type errNotFound string

func (e errNotFound) Error() string { return string(e) + ": not found" }
