// SPDX-License-Identifier: Apache-2.0

package objref

// validFor checks a name against a kind's naming rule.
func validFor(rule NameRule, name string) bool {
	switch rule {
	case Subdomain:
		return validSubdomain(name)
	case Label:
		return validNamespace(name)
	case Label1035:
		return validLabel1035(name)
	default:
		return validName(name)
	}
}

// validSubdomain accepts a DNS-1123 subdomain: at most 253 characters, dot-separated labels of
// lowercase alphanumerics and '-', each starting and ending with an alphanumeric.
func validSubdomain(s string) bool {
	if len(s) == 0 || len(s) > maxNameLen {
		return false
	}
	start := 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) && s[i] != '.' {
			c := s[i]
			if !isLowerAlnum(c) && c != '-' {
				return false
			}
			continue
		}
		label := s[start:i]
		if len(label) == 0 || !isLowerAlnum(label[0]) || !isLowerAlnum(label[len(label)-1]) {
			return false
		}
		start = i + 1
	}
	return true
}

// validLabel1035 accepts a DNS-1035 label: a DNS-1123 label that starts with a letter.
func validLabel1035(s string) bool {
	return validNamespace(s) && s[0] >= 'a' && s[0] <= 'z'
}

func isLowerAlnum(c byte) bool { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') }
