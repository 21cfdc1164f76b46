// SPDX-License-Identifier: Apache-2.0

package attr

// Names the audit_log receiver writes.
const (
	// AuditSerial is an auditd event's serial number (msg=audit(<time>:<serial>)).
	AuditSerial = Prefix + "audit.serial"
	// AuditRecords are an auditd event's records, in order: each a map of its fields plus "type".
	AuditRecords = Prefix + "audit.records"
	// AuditParseError says why a line could not be parsed (the record holds the line as it is).
	AuditParseError = Prefix + "audit.parse_error"
)

func init() {
	rec := func(name, typ, doc string) Entry {
		return Entry{Name: name, Origin: Own, Place: Record, Type: typ, Writers: []string{"audit_log"}, Doc: doc}
	}
	register(
		rec(AuditSerial, "int", "serial number of the auditd event"),
		rec(AuditRecords, "slice", "the auditd event's records, each its fields and type"),
		rec(AuditParseError, "string", "why the line could not be parsed; the body is the line"),
	)
}
