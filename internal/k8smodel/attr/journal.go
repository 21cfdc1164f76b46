// SPDX-License-Identifier: Apache-2.0

package attr

// Names the journal receiver writes. The journal fields with a semantic-convention name are
// written under it (_PID as process.pid, _HOSTNAME as the resource's host.name, the file's
// machine id as the resource's host.id); the others under the project's prefix.
const (
	// ProcessPID is the process that wrote a journal entry (_PID).
	ProcessPID = "process.pid"
	// HostID is, on a resource, the machine id of the host whose journal the data came from.
	HostID = "host.id"

	// JournalUnit is, on a resource, the systemd unit that wrote the entries (_SYSTEMD_UNIT).
	JournalUnit = Prefix + "journal.unit"
	// JournalIdentifier is an entry's syslog identifier (SYSLOG_IDENTIFIER).
	JournalIdentifier = Prefix + "journal.identifier"
	// JournalTransport is how an entry reached journald (_TRANSPORT: stdout, kernel, syslog...).
	JournalTransport = Prefix + "journal.transport"
	// JournalBootID is the boot an entry was written in (_BOOT_ID).
	JournalBootID = Prefix + "journal.boot_id"
	// JournalCursor is an entry's position in journalctl's cursor format (journalctl --cursor).
	JournalCursor = Prefix + "journal.cursor"
	// JournalUnreadableFields counts an entry's fields that could not be read (a corrupt file).
	JournalUnreadableFields = Prefix + "journal.unreadable_fields"
)

func init() {
	rec := func(name, typ, doc string) Entry {
		return Entry{Name: name, Origin: Own, Place: Record, Type: typ, Writers: []string{"journal"}, Doc: doc}
	}
	register(
		Entry{
			Name: ProcessPID, Origin: Semconv, Place: Record, Type: "int",
			Writers: []string{"journal"}, Doc: "process that wrote the entry (_PID)",
		},
		Entry{
			Name: HostID, Origin: Semconv, Place: Resource, Type: "string",
			Writers: []string{"journal"}, Doc: "machine id of the journal the data came from",
		},
		Entry{
			Name: JournalUnit, Origin: Own, Place: Resource, Type: "string",
			Writers: []string{"journal"}, Doc: "systemd unit that wrote the entries (_SYSTEMD_UNIT): with the file, their stream",
		},
		rec(JournalIdentifier, "string", "syslog identifier of the entry (SYSLOG_IDENTIFIER)"),
		rec(JournalTransport, "string", "how the entry reached journald (_TRANSPORT)"),
		rec(JournalBootID, "string", "boot the entry was written in (_BOOT_ID)"),
		rec(JournalCursor, "string", "the entry's journal cursor"),
		rec(JournalUnreadableFields, "int", "fields of the entry that could not be read"),
	)
}
