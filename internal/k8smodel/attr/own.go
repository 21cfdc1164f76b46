// SPDX-License-Identifier: Apache-2.0

package attr

import "strings"

// The project's own names. Each component's names are registered here, in one list, so that a
// name is spelled once.
const (
	// CRITags holds the CRI tags of a line other than P and F (future runtimes).
	CRITags = Prefix + "cri.tags"
	// CRIParseError is set when a line had no valid CRI or docker header.
	CRIParseError = Prefix + "cri.parse_error"
	// CRITruncated is set when an entry was cut at max_log_size.
	CRITruncated = Prefix + "cri.truncated"
	// CRIFlushed is set when a partial entry was emitted without its final piece.
	CRIFlushed = Prefix + "cri.flushed"
	// CRIInvalidUTF8 is set when invalid UTF-8 was replaced.
	CRIInvalidUTF8 = Prefix + "cri.invalid_utf8"
	// CRIUnterminated is set when a file ended without a line break.
	CRIUnterminated = Prefix + "cri.unterminated"

	// KlogFormat is the klog format a record was parsed from: text, json or zap.
	KlogFormat = Prefix + "klog.format"
	// KlogVerbosity is the V level of a klog JSON record.
	KlogVerbosity = Prefix + "klog.verbosity"
	// KlogParseError says where a klog record broke off.
	KlogParseError = Prefix + "klog.parse_error"
	// KlogUnparsed is the text from where parsing stopped.
	KlogUnparsed = Prefix + "klog.unparsed"
	// KlogPairPrefix prefixes a key/value pair whose key is a reserved attribute name, so that
	// log content never writes an identity attribute.
	KlogPairPrefix = Prefix + "klog.pair."

	// LogType is the log type (application, infrastructure, audit) a record is routed as.
	LogType = Prefix + "log.type"
	// NamespaceUID is, on a resource, the uid of the namespace the data came from; semantic
	// conventions have no name for it.
	NamespaceUID = Prefix + "namespace.uid"
)

func init() {
	flag := func(name, doc string) Entry {
		return Entry{Name: name, Origin: Own, Place: Record, Type: "bool", Writers: []string{"cri_log"}, Doc: doc}
	}
	register(
		Entry{
			Name: CRITags, Origin: Own, Place: Record, Type: "string", Writers: []string{"cri_log"},
			Doc: "CRI tags other than P and F",
		},
		flag(CRIParseError, "the line had no valid CRI or docker header"),
		flag(CRITruncated, "the entry was cut at max_log_size"),
		flag(CRIFlushed, "a partial entry emitted without its final piece"),
		flag(CRIInvalidUTF8, "invalid UTF-8 replaced"),
		flag(CRIUnterminated, "the file ended without a line break"),
		Entry{
			Name: KlogFormat, Origin: Own, Place: Record, Type: "string", Writers: []string{"klog_parser"},
			Doc: "text, json or zap: the klog format the record was parsed from",
		},
		Entry{
			Name: KlogVerbosity, Origin: Own, Place: Record, Type: "int", Writers: []string{"klog_parser"},
			Doc: "V level of a JSON record",
		},
		Entry{
			Name: KlogParseError, Origin: Own, Place: Record, Type: "string", Writers: []string{"klog_parser"},
			Doc: "where a klog record broke off",
		},
		Entry{
			Name: KlogUnparsed, Origin: Own, Place: Record, Type: "string", Writers: []string{"klog_parser"},
			Doc: "the text from where parsing stopped",
		},
		Entry{
			Name: LogType, Origin: Own, Place: Resource, Type: "string", Writers: []string{"users", "audit_log"},
			Doc: "log type a record is routed as: application, infrastructure or audit",
		},
		Entry{
			Name: NamespaceUID, Origin: Own, Place: Resource, Type: "string", Writers: []string{"users", "cri_log"},
			Doc: "uid of the namespace the data came from",
		},
	)
}

// Families are attribute names made of a registered prefix and a part taken from the data.
var families = []string{KlogPairPrefix, K8sPodLabelsPrefix, K8sPodAnnotationsPrefix, K8sNamespaceLabelsPrefix}

// RegisteredOrFamily reports whether name is registered or belongs to a registered family.
func RegisteredOrFamily(name string) bool {
	if Registered(name) {
		return true
	}
	for _, f := range families {
		if len(name) > len(f) && strings.HasPrefix(name, f) {
			return true
		}
	}
	return false
}

// reservedNamespaces are the attribute namespaces that identify where data came from or that
// the project writes; log content may not write a key inside them.
var reservedNamespaces = []string{
	Prefix, "k8s.", "container.", "host.", "cloud.", "service.", "log.", "code.", "thread.",
	"exception.", "error.", "aws.", "os.", "process.", "telemetry.",
}

// Reserved reports whether a key taken from log content (a klog key/value pair, a JSON field)
// would land on a registered name or inside a reserved namespace. It runs for every key/value
// pair klog_parser writes: a key without a dot (most klog keys) is answered without a lookup,
// as every registered name and reserved namespace has one (TestEveryNameHasADot).
func Reserved(key string) bool {
	if strings.IndexByte(key, '.') < 0 {
		return false
	}
	if Registered(key) {
		return true
	}
	for _, ns := range reservedNamespaces {
		if strings.HasPrefix(key, ns) {
			return true
		}
	}
	return false
}
