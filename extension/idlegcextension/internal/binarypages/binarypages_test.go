// SPDX-License-Identifier: Apache-2.0

package binarypages

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestReadOnlySpans(t *testing.T) {
	const exe = "/usr/bin/otelcol k8s"
	maps := `00400000-02437000 r-xp 00000000 fd:01 1234 /usr/bin/otelcol k8s
02437000-048df000 r--p 02037000 fd:01 1234 /usr/bin/otelcol k8s
048df000-0499f000 rw-p 044df000 fd:01 1234 /usr/bin/otelcol k8s
0499f000-049c0000 rw-p 00000000 00:00 0
c000000000-c004000000 rw-p 00000000 00:00 0
7f0000000000-7f0000001000 r--p 00000000 fd:01 99 /usr/bin/otelcol
7f0000001000-7f0000002000 r--p 00000000 fd:01 99 /usr/bin/otelcol k8s (deleted)
zzzz-02437000 r-xp 00000000 fd:01 1234 /usr/bin/otelcol k8s
02437000-02437000 r--p 00000000 fd:01 1234 /usr/bin/otelcol k8s
7ffd1000-7ffd3000 r-xp 00000000 00:00 0 [vdso]
`
	tests := []struct {
		name string
		exe  string
		want []Span
	}{
		{"code and read-only data, not the writable data or other files", exe, []Span{{0x400000, 0x2437000}, {0x2437000, 0x48df000}}},
		{"a replaced executable keeps its (deleted) name", exe + " (deleted)", []Span{{0x7f0000001000, 0x7f0000002000}}},
		{"not mapped", "/bin/true", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, ReadOnlySpans([]byte(maps), tt.exe))
		})
	}
}

func TestRSSFile(t *testing.T) {
	tests := []struct {
		name   string
		status string
		want   int64
		ok     bool
	}{
		{"present", "VmRSS:\t   61232 kB\nRssAnon:\t   18000 kB\nRssFile:\t   43188 kB\nRssShmem:\t       0 kB\n", 43188 * 1024, true},
		{"absent", "VmRSS:\t   61232 kB\n", 0, false},
		{"garbled", "RssFile:\t   many kB\n", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := rssFile([]byte(tt.status))
			assert.Equal(t, tt.ok, ok)
			if tt.ok {
				assert.Equal(t, tt.want, got)
			}
		})
	}
}
