// SPDX-License-Identifier: Apache-2.0

package klogline

import "time"

// Parser parses klog lines. The zero value parses both formats in UTC.
// A Parser is safe for concurrent use; a Record is not.
type Parser struct {
	// Location is the zone of text header times; nil means UTC.
	Location *time.Location
	// SkipText and SkipJSON disable a format.
	SkipText bool
	SkipJSON bool
	// Zap also recognizes zap production JSON (with a level key), which applications write
	// too; off by default.
	Zap bool
}

// Parse parses line into rec and returns its format; FormatNone means the line is not klog
// and rec holds nothing. ref is the time used to infer the year of a text header.
func (p *Parser) Parse(line string, ref time.Time, rec *Record) Format {
	rec.reset()
	if len(line) == 0 {
		return FormatNone
	}
	switch line[0] {
	case 'I', 'W', 'E', 'F':
		if !p.SkipText && p.parseText(line, ref, rec) {
			return FormatText
		}
	case '{':
		if (!p.SkipJSON || p.Zap) && p.parseJSON(line, rec) {
			return rec.Format
		}
	}
	rec.reset()
	return FormatNone
}

// futureTolerance is how far past the reference time a header may lie and still be taken to
// be in the reference year: clock skew between hosts and a misconfigured zone, not more.
const futureTolerance = 7 * 24 * time.Hour

// headerTime resolves a year-less header in p.Location. Logs are written before they are
// read, so the year is the latest one that does not put the header more than
// futureTolerance after ref: a December line read in January falls in the previous year, a
// January line read (with a clock slightly behind) on 31 December in the next.
func (p *Parser) headerTime(h header, ref time.Time) (time.Time, bool) {
	if h.month < 1 || h.month > 12 || h.day < 1 || h.day > 31 || h.hour > 23 || h.min > 59 || h.sec > 60 {
		return time.Time{}, false
	}
	loc := p.Location
	if loc == nil {
		loc = time.UTC
	}
	ref = ref.In(loc)
	limit := ref.Add(futureTolerance)
	year := ref.Year()
	if ref.YearDay() > 365-8 {
		if t := time.Date(year+1, time.Month(h.month), h.day, h.hour, h.min, h.sec, h.nsec, loc); !t.After(limit) {
			return t, validDay(t, h)
		}
	}
	t := time.Date(year, time.Month(h.month), h.day, h.hour, h.min, h.sec, h.nsec, loc)
	if t.After(limit) {
		t = time.Date(year-1, time.Month(h.month), h.day, h.hour, h.min, h.sec, h.nsec, loc)
	}
	return t, validDay(t, h)
}

// validDay rejects dates that time.Date normalised (Feb 30 becomes Mar 2). A leap second
// (ss = 60) is accepted and rolls into the next second.
func validDay(t time.Time, h header) bool {
	if h.sec == 60 {
		return true
	}
	return t.Day() == h.day
}
