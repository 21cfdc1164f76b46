// SPDX-License-Identifier: Apache-2.0

package auditlogreceiver

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Lines in the format auditd 3 writes (RAW and ENRICHED log_format).
const (
	lineSyscall   = `type=SYSCALL msg=audit(1700000000.123:4242): arch=c000003e syscall=59 success=yes exit=0 a0=55d5c0a0 a1=55d5c0b0 a2=55d5c0c0 a3=0 items=2 ppid=1201 pid=1300 auid=4294967295 uid=0 gid=0 euid=0 suid=0 fsuid=0 egid=0 sgid=0 fsgid=0 tty=(none) ses=4294967295 comm="runc" exe="/usr/bin/runc" subj=unconfined key="exec"`
	lineExecve    = `type=EXECVE msg=audit(1700000000.123:4242): argc=3 a0="runc" a1="--version" a2=2D2D6C6F67`
	lineCwd       = `type=CWD msg=audit(1700000000.123:4242): cwd="/"`
	linePath0     = `type=PATH msg=audit(1700000000.123:4242): item=0 name="/usr/bin/runc" inode=1234 dev=103:01 mode=0100755 ouid=0 ogid=0 rdev=00:00 nametype=NORMAL cap_fp=0 cap_fi=0 cap_fe=0 cap_fver=0 cap_frootid=0`
	linePath1     = `type=PATH msg=audit(1700000000.123:4242): item=1 name="/lib64/ld-linux-x86-64.so.2" inode=5678 dev=103:01 mode=0100755 ouid=0 ogid=0 rdev=00:00 nametype=NORMAL`
	lineProctitle = `type=PROCTITLE msg=audit(1700000000.123:4242): proctitle=72756E63002D2D76657273696F6E`
	lineEOE       = `type=EOE msg=audit(1700000000.123:4242): `
	lineUserLogin = "type=USER_LOGIN msg=audit(1700000001.500:4243): pid=2000 uid=0 auid=1000 ses=3 subj=system_u:system_r:sshd_t:s0-s0:c0.c1023 msg='op=login id=1000 exe=\"/usr/sbin/sshd\" hostname=10.0.0.5 addr=10.0.0.5 terminal=/dev/pts/0 res=success'\x1dUID=\"root\" AUID=\"ec2-user\" ID=\"ec2-user\""
	lineNode      = `node=ip-10-0-1-23 type=SERVICE_START msg=audit(1700000002.007:4250): pid=1 uid=0 auid=4294967295 ses=4294967295 msg='unit=kubelet comm="systemd" exe="/usr/lib/systemd/systemd" hostname=? addr=? terminal=? res=success'`
)

func TestParseAuditd(t *testing.T) {
	for _, tc := range []struct {
		name   string
		line   string
		want   auditdRecord
		fields map[string]string // a selection, checked one by one
		n      int               // number of fields
		err    bool
	}{
		{
			name: "syscall", line: lineSyscall, want: auditdRecord{Type: "SYSCALL", Sec: 1700000000, Milli: 123, Serial: 4242},
			fields: map[string]string{"arch": "c000003e", "syscall": "59", "comm": "runc", "exe": "/usr/bin/runc", "tty": "(none)", "key": "exec"}, n: 26,
		},
		{
			name: "execve hex argument", line: lineExecve, want: auditdRecord{Type: "EXECVE", Sec: 1700000000, Milli: 123, Serial: 4242},
			fields: map[string]string{"argc": "3", "a1": "--version", "a2": "2D2D6C6F67"}, n: 4,
		},
		{name: "eoe, no fields", line: lineEOE, want: auditdRecord{Type: "EOE", Sec: 1700000000, Milli: 123, Serial: 4242}, n: 0},
		{
			name: "user record: msg='...' split, enriched part after 0x1d", line: lineUserLogin,
			want:   auditdRecord{Type: "USER_LOGIN", Sec: 1700000001, Milli: 500, Serial: 4243},
			fields: map[string]string{"pid": "2000", "op": "login", "exe": "/usr/sbin/sshd", "terminal": "/dev/pts/0", "res": "success", "UID": "root", "AUID": "ec2-user"}, n: 15,
		},
		{
			name: "node= prefix", line: lineNode, want: auditdRecord{Node: "ip-10-0-1-23", Type: "SERVICE_START", Sec: 1700000002, Milli: 7, Serial: 4250},
			fields: map[string]string{"unit": "kubelet", "comm": "systemd", "hostname": "?"}, n: 11,
		},
		{name: "unterminated quote keeps the rest", line: `type=X msg=audit(1.000:1): a="b c`, want: auditdRecord{Type: "X", Sec: 1, Serial: 1}, fields: map[string]string{"a": "b c"}, n: 1},
		{name: "word without =", line: `type=X msg=audit(1.000:1): lone a=b`, want: auditdRecord{Type: "X", Sec: 1, Serial: 1}, fields: map[string]string{"": "lone", "a": "b"}, n: 2},
		{name: "not audit", line: `Nov 27 12:00:00 host sshd[1]: Accepted publickey`, err: true},
		{name: "no header", line: `type=SYSCALL arch=c000003e`, err: true},
		{name: "bad serial", line: `type=SYSCALL msg=audit(1700000000.123:x): a=b`, err: true},
		{name: "bad milliseconds", line: `type=SYSCALL msg=audit(1700000000.1234:1): a=b`, err: true},
		{name: "negative time", line: `type=SYSCALL msg=audit(-1.000:1): a=b`, err: true},
		{name: "no closing paren", line: `type=SYSCALL msg=audit(1700000000.123:1 a=b`, err: true},
		{name: "node only", line: `node=x`, err: true},
		{name: "empty", line: ``, err: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseAuditd(tc.line)
			if tc.err {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want.Type, got.Type)
			require.Equal(t, tc.want.Node, got.Node)
			require.Equal(t, tc.want.Sec, got.Sec)
			require.Equal(t, tc.want.Milli, got.Milli)
			require.Equal(t, tc.want.Serial, got.Serial)
			require.Len(t, got.Fields, tc.n, "%v", got.Fields)
			for k, v := range tc.fields {
				found := false
				for _, f := range got.Fields {
					if f.K == k && f.V == v {
						found = true
					}
				}
				require.True(t, found, "%s=%s not in %v", k, v, got.Fields)
			}
		})
	}
}

// FuzzParseAuditd: any line parses or fails cleanly; a parsed line's fields are pieces of it
// and a parsed header is what the line says.
func FuzzParseAuditd(f *testing.F) {
	for _, l := range []string{lineSyscall, lineExecve, lineCwd, linePath0, lineEOE, lineUserLogin, lineNode, `type=X msg=audit(1.000:1): a='b="c`, "type=X msg=audit(1.000:1): \x1d\x1d'"} {
		f.Add(l)
	}
	f.Fuzz(func(t *testing.T, line string) {
		r, err := parseAuditd(line)
		if err != nil {
			return
		}
		if r.Type == "" || strings.ContainsAny(r.Type, " ") || r.Milli < 0 || r.Milli > 999 || r.Sec < 0 {
			t.Fatalf("bad header %+v from %q", r, line)
		}
		for _, f := range r.Fields {
			if !strings.Contains(line, f.K) || !strings.Contains(line, f.V) {
				t.Fatalf("field %q=%q is not in %q", f.K, f.V, line)
			}
		}
	})
}
