// SPDX-License-Identifier: Apache-2.0

package cloudwatchgroupsexporter

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseKnownGroups(t *testing.T) {
	for _, tc := range []struct {
		name    string
		raw     []byte
		want    []string
		wantErr bool
	}{
		{name: "never written", raw: nil},
		{name: "empty list", raw: []byte(knownGroupsHeader)},
		{name: "names", raw: []byte(knownGroupsHeader + "c.application\nc.namespace/shop"), want: []string{"c.application", "c.namespace/shop"}},
		{name: "empty lines skipped", raw: []byte(knownGroupsHeader + "\na\n\nb\n"), want: []string{"a", "b"}},
		{name: "another format", raw: []byte("cloudwatch_groups known groups 2\na"), wantErr: true},
		{name: "no header", raw: []byte("a\nb"), wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseKnownGroups(tc.raw)
			if tc.wantErr {
				require.Error(t, err)
				assert.Empty(t, got)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestKnownGroupsKeepsAtMostTheLimit(t *testing.T) {
	names := make([]string, knownGroupsLimit+5)
	for i := range names {
		names[i] = "g/" + strconv.Itoa(i)
	}
	got, err := parseKnownGroups(formatKnownGroups(slices.Clone(names)))
	require.NoError(t, err)
	assert.Len(t, got, knownGroupsLimit)
}

// FuzzKnownGroups: any stored value is read without a panic, and a list written is read back.
func FuzzKnownGroups(f *testing.F) {
	f.Add([]byte(knownGroupsHeader+"a\nb"), "c.namespace/x")
	f.Add([]byte("junk"), "")
	f.Fuzz(func(t *testing.T, raw []byte, name string) {
		_, _ = parseKnownGroups(raw)
		if name == "" || strings.Contains(name, "\n") {
			return
		}
		got, err := parseKnownGroups(formatKnownGroups([]string{name, "other"}))
		require.NoError(t, err)
		assert.ElementsMatch(t, []string{name, "other"}, got)
	})
}
