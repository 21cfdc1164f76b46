// SPDX-License-Identifier: Apache-2.0

package localcloudwatch

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Name and value rules of the CloudWatch Logs API (API reference, 2014-03-28).
const (
	maxNameLen        = 512
	groupNamePattern  = `[\.\-_/#A-Za-z0-9]+`
	streamNamePattern = `[^:*]*`
	maxTags           = 50
	maxTagKeyLen      = 128
	maxTagValueLen    = 256
	maxKMSKeyIDLen    = 256
)

// RetentionDays lists the values PutRetentionPolicy accepts.
var RetentionDays = []int32{
	1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731,
	1096, 1827, 2192, 2557, 2922, 3288, 3653,
}

// LogGroupClasses lists the log group classes CreateLogGroup accepts.
var LogGroupClasses = []string{"STANDARD", "INFREQUENT_ACCESS", "DELIVERY", "ESSENTIALS"}

func isGroupNameChar(r rune) bool {
	return r == '.' || r == '-' || r == '_' || r == '/' || r == '#' ||
		(r >= 'A' && r <= 'Z') || (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9')
}

// validateGroupName checks a log group name given in member (for example
// "logGroupName") against the length and character rules.
func validateGroupName(name, member string) *apiError {
	if n := utf8.RuneCountInString(name); n < 1 {
		return constraintError(name, member, "Member must have length greater than or equal to 1")
	} else if n > maxNameLen {
		return constraintError(name, member, "Member must have length less than or equal to 512")
	}
	for _, r := range name {
		if !isGroupNameChar(r) {
			return constraintError(name, member, "Member must satisfy regular expression pattern: "+groupNamePattern)
		}
	}
	return nil
}

// validateNewGroupName adds the creation-only rule: names starting with "aws/" are
// reserved for AWS services.
func validateNewGroupName(name string) *apiError {
	if err := validateGroupName(name, "logGroupName"); err != nil {
		return err
	}
	if strings.HasPrefix(name, "aws/") {
		return invalidParam("Log group names can't start with the string aws/")
	}
	return nil
}

// validateStreamName checks a log stream name against the length and character rules.
func validateStreamName(name, member string) *apiError {
	if n := utf8.RuneCountInString(name); n < 1 {
		return constraintError(name, member, "Member must have length greater than or equal to 1")
	} else if n > maxNameLen {
		return constraintError(name, member, "Member must have length less than or equal to 512")
	}
	if strings.ContainsAny(name, ":*") {
		return constraintError(name, member, "Member must satisfy regular expression pattern: "+streamNamePattern)
	}
	return nil
}

func validateRetention(days int32) *apiError {
	if slices.Contains(RetentionDays, days) {
		return nil
	}
	return constraintError(days, "retentionInDays",
		"Member must satisfy enum value set: [1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653]")
}

func validateClass(class string) *apiError {
	if slices.Contains(LogGroupClasses, class) {
		return nil
	}
	return constraintError(class, "logGroupClass",
		"Member must satisfy enum value set: ["+strings.Join(LogGroupClasses, ", ")+"]")
}

// validateKMSKeyID accepts a KMS key ARN: arn:<partition>:kms:<region>:<account>:key/<id>.
func validateKMSKeyID(id string) *apiError {
	if len(id) > maxKMSKeyIDLen {
		return constraintError(id, "kmsKeyId", "Member must have length less than or equal to 256")
	}
	parts := strings.SplitN(id, ":", 6)
	if len(parts) != 6 || parts[0] != "arn" || parts[1] == "" || parts[2] != "kms" ||
		parts[3] == "" || len(parts[4]) != 12 || !strings.HasPrefix(parts[5], "key/") || len(parts[5]) == len("key/") {
		return invalidParam("Specified KMS key %s is not valid: it must be the ARN of a KMS key (arn:aws:kms:<region>:<account>:key/<key-id>).", id)
	}
	return nil
}

func isTagChar(r rune) bool {
	return unicode.IsLetter(r) || unicode.Is(unicode.Z, r) || unicode.IsNumber(r) ||
		strings.ContainsRune("_.:/=+-@", r)
}

// validateTags checks tag keys and values. member names the request field.
func validateTags(tags map[string]string, member string) *apiError {
	if len(tags) > maxTags {
		return constraintError("{...}", member, "Member must have length less than or equal to 50")
	}
	for k, v := range tags {
		if err := validateTagKey(k, member+".key"); err != nil {
			return err
		}
		if utf8.RuneCountInString(v) > maxTagValueLen {
			return constraintError(v, member+".value", "Member must have length less than or equal to 256")
		}
		for _, r := range v {
			if !isTagChar(r) {
				return constraintError(v, member+".value", `Member must satisfy regular expression pattern: ^([\p{L}\p{Z}\p{N}_.:/=+\-@]*)$`)
			}
		}
	}
	return nil
}

func validateTagKey(k, member string) *apiError {
	n := utf8.RuneCountInString(k)
	if n < 1 {
		return constraintError(k, member, "Member must have length greater than or equal to 1")
	}
	if n > maxTagKeyLen {
		return constraintError(k, member, "Member must have length less than or equal to 128")
	}
	for _, r := range k {
		if !isTagChar(r) {
			return constraintError(k, member, `Member must satisfy regular expression pattern: ^([\p{L}\p{Z}\p{N}_.:/=+\-@]+)$`)
		}
	}
	if strings.HasPrefix(strings.ToLower(k), "aws:") {
		return invalidParam("Tag keys starting with 'aws:' are reserved for AWS use: %s", k)
	}
	return nil
}

// groupNameFromIdentifier accepts a log group name or ARN
// (arn:aws:logs:<region>:<account>:log-group:<name>[:*]) and returns the name.
func groupNameFromIdentifier(id string) (string, bool) {
	if !strings.HasPrefix(id, "arn:") {
		return id, true
	}
	parts := strings.SplitN(id, ":", 7)
	if len(parts) != 7 || parts[2] != "logs" || parts[5] != "log-group" {
		return "", false
	}
	name := strings.TrimSuffix(parts[6], ":*")
	return name, name != ""
}
