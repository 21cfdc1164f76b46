// SPDX-License-Identifier: Apache-2.0

package localcloudwatch

import "strings"

// compileFilterPattern compiles the unstructured-text subset of the CloudWatch Logs
// filter pattern syntax: space-separated terms that must all appear, "quoted phrases",
// ?terms of which at least one must appear, and -terms that must not appear. Matching
// is case-sensitive, as in CloudWatch Logs. JSON ({...}), space-delimited ([...]) and
// regular-expression (%...%) patterns are refused with InvalidParameterException
// rather than answered wrongly.
func compileFilterPattern(p string) (func(string) bool, *apiError) {
	p = strings.TrimSpace(p)
	if p == "" {
		return func(string) bool { return true }, nil
	}
	if strings.HasPrefix(p, "{") || strings.HasPrefix(p, "[") || strings.HasPrefix(p, "%") {
		return nil, invalidParam("localcloudwatch supports only term, phrase, ?term and -term filter patterns, not %q.", p)
	}
	var all, anyOf, none []string
	for rest := p; rest != ""; rest = strings.TrimLeft(rest, " ") {
		prefix := byte(0)
		if rest[0] == '?' || rest[0] == '-' {
			prefix, rest = rest[0], rest[1:]
		}
		var term string
		if strings.HasPrefix(rest, `"`) {
			end := strings.IndexByte(rest[1:], '"')
			if end < 0 {
				return nil, invalidParam("Invalid filter pattern %q: unterminated quote.", p)
			}
			term, rest = rest[1:1+end], rest[2+end:]
		} else {
			end := strings.IndexByte(rest, ' ')
			if end < 0 {
				end = len(rest)
			}
			term, rest = rest[:end], rest[end:]
		}
		if term == "" {
			return nil, invalidParam("Invalid filter pattern %q: empty term.", p)
		}
		switch prefix {
		case '?':
			anyOf = append(anyOf, term)
		case '-':
			none = append(none, term)
		default:
			all = append(all, term)
		}
	}
	return func(msg string) bool {
		for _, t := range all {
			if !strings.Contains(msg, t) {
				return false
			}
		}
		for _, t := range none {
			if strings.Contains(msg, t) {
				return false
			}
		}
		if len(anyOf) == 0 {
			return true
		}
		for _, t := range anyOf {
			if strings.Contains(msg, t) {
				return true
			}
		}
		return false
	}, nil
}
