// SPDX-License-Identifier: Apache-2.0

package criline

// ParseTime parses an RFC 3339 timestamp with an optional fraction of up to nine digits and a
// "Z" or "±hh:mm" offset (containerd writes "Z", CRI-O an offset), and returns nanoseconds since
// the Unix epoch. It is a hand-written parser: time.Parse costs several times more per line.
func ParseTime(b []byte) (int64, error) {
	var c timeCache
	return c.parse(b)
}

// timeCache parses timestamps as ParseTime does, keeping the date and time of day of the last
// one it parsed: a file's consecutive lines mostly fall in the same second, and then only
// the fraction and the offset are read.
type timeCache struct {
	prefix [19]byte // 2006-01-02T15:04:05 as written
	secs   int64    // what prefix says, in seconds since the epoch before the offset
	valid  bool
}

func (c *timeCache) parse(b []byte) (int64, error) {
	// 2006-01-02T15:04:05Z is the shortest form.
	if len(b) < 20 {
		return 0, ErrTimestamp
	}
	if !c.valid || [19]byte(b[:19]) != c.prefix {
		secs, ok := parseDateTime(b[:19])
		if !ok {
			return 0, ErrTimestamp
		}
		c.prefix, c.secs, c.valid = [19]byte(b[:19]), secs, true
	}
	i := 19
	var nanos int64
	if b[i] == '.' {
		i++
		start := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			if i-start < 9 {
				nanos = nanos*10 + int64(b[i]-'0')
			}
			i++
		}
		n := i - start
		if n == 0 || n > 9 {
			return 0, ErrTimestamp
		}
		for ; n < 9; n++ {
			nanos *= 10
		}
	}
	if i >= len(b) {
		return 0, ErrTimestamp
	}
	var offset int64
	switch b[i] {
	case 'Z', 'z':
		i++
	case '+', '-':
		if len(b)-i != 6 || b[i+3] != ':' {
			return 0, ErrTimestamp
		}
		oh, okh := digits(b[i+1 : i+3])
		om, okm := digits(b[i+4 : i+6])
		if !okh || !okm || oh > 23 || om > 59 {
			return 0, ErrTimestamp
		}
		offset = int64(oh*3600 + om*60)
		if b[i] == '-' {
			offset = -offset
		}
		i += 6
	default:
		return 0, ErrTimestamp
	}
	if i != len(b) {
		return 0, ErrTimestamp
	}
	return (c.secs-offset)*1e9 + nanos, nil
}

// parseDateTime parses 2006-01-02T15:04:05 (b is 19 bytes) into seconds since the epoch.
func parseDateTime(b []byte) (int64, bool) {
	if b[4] != '-' || b[7] != '-' || (b[10] != 'T' && b[10] != 't') || b[13] != ':' || b[16] != ':' {
		return 0, false
	}
	year, ok1 := digits(b[0:4])
	month, ok2 := digits(b[5:7])
	day, ok3 := digits(b[8:10])
	hour, ok4 := digits(b[11:13])
	minute, ok5 := digits(b[14:16])
	sec, ok6 := digits(b[17:19])
	if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 || !ok6 ||
		month < 1 || month > 12 || day < 1 || day > daysIn(year, month) ||
		hour > 23 || minute > 59 || sec > 59 {
		return 0, false
	}
	return daysFromCivil(year, month, day)*86400 + int64(hour*3600+minute*60+sec), true
}

func digits(b []byte) (int, bool) {
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

func daysIn(year, month int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// daysFromCivil returns the number of days from 1970-01-01 to the given proleptic Gregorian
// date (the well-known era-based conversion).
func daysFromCivil(y, m, d int) int64 {
	if m <= 2 {
		y--
	}
	era := y / 400
	if y < 0 && y%400 != 0 {
		era--
	}
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return int64(era)*146097 + int64(doe) - 719468
}
