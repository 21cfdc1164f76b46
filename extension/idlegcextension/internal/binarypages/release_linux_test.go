// SPDX-License-Identifier: Apache-2.0

//go:build linux

package binarypages

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRelease releases the test binary's own pages: RssFile falls, and the program (this
// test) goes on running from pages that come back on first touch.
func TestRelease(t *testing.T) {
	before, ok := selfRSSFile()
	require.True(t, ok)
	require.Positive(t, before)
	released, err := Release()
	if errors.Is(err, ErrUnsupported) {
		t.Skipf("the pages cannot be released here: %v", err)
	}
	require.NoError(t, err)
	require.Positive(t, released, "RssFile before: %d bytes", before)
	after, ok := selfRSSFile()
	require.True(t, ok)
	require.Less(t, after, before)
	t.Logf("RssFile %d KiB, released %d KiB, now %d KiB", before>>10, released>>10, after>>10)
}
