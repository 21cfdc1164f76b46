// SPDX-License-Identifier: Apache-2.0

package journaltest

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
)

// BootA and BootB are the boot ids generated entries use.
const (
	BootA = "0123456789abcdef0123456789abcdef"
	BootB = "fedcba9876543210fedcba9876543210"
)

// Generate returns n entries starting at realtime start (microseconds), deterministic for a
// seed: many units (units of them, plus kernel messages), messages of every size (a fifth
// above 512 bytes, which systemd compresses), binary and non-UTF-8 values, newlines, repeated
// fields, empty values, _SOURCE_REALTIME_TIMESTAMP on some, two boots.
func Generate(seed uint64, n, units int, start uint64) []Entry {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)) //nolint:gosec // test data from a fixed seed, not a secret
	out := make([]Entry, 0, n)
	for i := range n {
		boot := BootA
		if i >= n/2 {
			boot = BootB
		}
		e := Entry{Realtime: start + uint64(i)*1000 + uint64(rng.IntN(500)), Monotonic: 1_000_000 + uint64(i)*1000, BootID: boot} //nolint:gosec // small non-negative test values
		pri := rng.IntN(8)
		var msg string
		switch k := rng.IntN(10); {
		case k < 2:
			msg = fmt.Sprintf("I1127 12:%02d:%02d.%06d  1234 kubelet.go:%d] large %d %s", i%60, i%60, i, i, i, strings.Repeat("abcdefghij", 52+rng.IntN(200)))
		case k < 3:
			msg = fmt.Sprintf("multi\nline %d\n\ttab", i)
		default:
			msg = fmt.Sprintf("E1127 12:00:00.000000 %d pod_workers.go:1301] \"Error syncing pod\" pod=\"ns%d/p%d\" n=%d", 100+i, i%7, i, i)
		}
		if rng.IntN(5) == 0 {
			e.Fields = append(e.Fields, F("_TRANSPORT", "kernel"), F("SYSLOG_IDENTIFIER", "kernel"))
		} else {
			u := rng.IntN(units)
			e.Fields = append(e.Fields,
				F("_SYSTEMD_UNIT", unitName(u)),
				F("SYSLOG_IDENTIFIER", strings.TrimSuffix(unitName(u), ".service")),
				F("_TRANSPORT", "stdout"),
				F("_PID", strconv.Itoa(1000+u)))
		}
		e.Fields = append(e.Fields, F("MESSAGE", msg), F("PRIORITY", strconv.Itoa(pri)), F("_HOSTNAME", "node-1"))
		if rng.IntN(3) == 0 {
			e.Fields = append(e.Fields, F("_SOURCE_REALTIME_TIMESTAMP", strconv.FormatUint(e.Realtime-uint64(rng.IntN(900)), 10))) //nolint:gosec // small non-negative test values
		}
		if rng.IntN(7) == 0 {
			e.Fields = append(e.Fields, Field{Name: "BINARY", Value: []byte{0, 1, 2, 0xff, 0xfe, byte(i)}})
		}
		if rng.IntN(9) == 0 {
			e.Fields = append(e.Fields, Field{Name: "MESSAGE_ID", Value: []byte{}}, F("TAG", "a"), F("TAG", "b"+strconv.Itoa(i)))
		}
		if rng.IntN(11) == 0 {
			big := make([]byte, 600+rng.IntN(3000))
			for j := range big {
				big[j] = byte(rng.IntN(256)) //nolint:gosec // IntN(256) fits a byte
			}
			e.Fields = append(e.Fields, Field{Name: "COREDUMP", Value: big})
		}
		out = append(out, e)
	}
	return out
}

// Units are the unit names Generate uses: the receiver's default units first.
var Units = []string{"kubelet.service", "containerd.service", "docker.service", "sandbox-image.service"}

func unitName(i int) string {
	if i < len(Units) {
		return Units[i]
	}
	return fmt.Sprintf("unit-%03d.service", i)
}
