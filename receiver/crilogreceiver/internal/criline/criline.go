// SPDX-License-Identifier: Apache-2.0

// Package criline parses single container log lines: the CRI format written by containerd and
// CRI-O, and Docker's json-file format. Parsing does not allocate for CRI lines and allocates
// only when a Docker line's string needs unescaping.
package criline

import (
	"bytes"
	"errors"
)

// Stream is the container output stream a line came from.
type Stream uint8

// Streams. The zero value is invalid so that an unparsed Line is recognizable.
const (
	Stdout Stream = 1
	Stderr Stream = 2
)

// String returns the log.iostream value of s.
func (s Stream) String() string {
	switch s {
	case Stdout:
		return "stdout"
	case Stderr:
		return "stderr"
	}
	return "unknown"
}

// Line is one parsed log line. Its byte slices alias the parsed input (or the parser's scratch
// buffer for Docker lines with escapes) and are valid until the next parse.
type Line struct {
	// Time is the runtime's timestamp in nanoseconds since the Unix epoch.
	Time int64
	// Stream is stdout or stderr.
	Stream Stream
	// Partial reports that the entry continues on a later line of the same stream.
	Partial bool
	// Tags holds the tags after the first (P/F) one, as written, without the leading ':'.
	// It is nil when there are none.
	Tags []byte
	// Content is the entry content, without the line's newline.
	Content []byte

	// times keeps the last timestamp's second for the next parse into this Line.
	times timeCache
}

// Errors returned by the parsers.
var (
	ErrTimestamp = errors.New("criline: invalid RFC 3339 timestamp")
	ErrStream    = errors.New("criline: stream is neither stdout nor stderr")
	ErrTag       = errors.New("criline: first tag is neither P nor F")
	ErrFormat    = errors.New("criline: line is not in CRI format")
	ErrJSON      = errors.New("criline: line is not a Docker json-file object")
)

// ParseCRI parses line (without its trailing newline) in the CRI format
// "<RFC3339Nano time> <stdout|stderr> <tags> <content>" into out. Reusing out for a file's
// lines is faster: it keeps the last timestamp's second.
func ParseCRI(line []byte, out *Line) error {
	sp := indexSpace(line, 0)
	if sp < 0 {
		return ErrFormat
	}
	t, err := out.times.parse(line[:sp])
	if err != nil {
		return err
	}
	rest := line[sp+1:]
	var stream Stream
	switch {
	case len(rest) >= 7 && string(rest[:7]) == "stdout ":
		stream = Stdout
	case len(rest) >= 7 && string(rest[:7]) == "stderr ":
		stream = Stderr
	default:
		return ErrStream
	}
	rest = rest[7:]
	tagEnd := indexSpace(rest, 0)
	var tags, content []byte
	if tagEnd < 0 {
		// "<time> <stream> F" with nothing after the tags: an empty entry.
		tags = rest
	} else {
		tags = rest[:tagEnd]
		content = rest[tagEnd+1:]
	}
	if len(tags) == 0 {
		return ErrTag
	}
	switch tags[0] {
	case 'P':
		out.Partial = true
	case 'F':
		out.Partial = false
	default:
		return ErrTag
	}
	switch {
	case len(tags) == 1:
		out.Tags = nil
	case tags[1] == ':':
		out.Tags = tags[2:]
	default:
		return ErrTag
	}
	out.Time = t
	out.Stream = stream
	if content == nil {
		content = rest[:0:0]
	}
	out.Content = content
	return nil
}

func indexSpace(b []byte, from int) int {
	i := bytes.IndexByte(b[from:], ' ')
	if i < 0 {
		return -1
	}
	return from + i
}
