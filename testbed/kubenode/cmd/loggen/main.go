// SPDX-License-Identifier: Apache-2.0

// Command loggen is the test node's logging workload: it writes numbered lines to stdout and
// stderr at a set rate, so that a test knows exactly what the container wrote and can account
// for every line that a reader of the node's log files delivers.
//
// Each line is
//
//	<id> <stream> <seq> <padding>
//
// where id is -id (default: the host name, which is the Pod's name), stream is "stdout" or
// "stderr", seq counts from 1 per stream, and padding fills the line to -size bytes (newline
// excluded). Lines alternate between the streams when -streams is "both". After -count lines
// per stream (0: no end) it prints nothing more and waits for SIGTERM, so that the Pod stays
// Running and its files stay in place until the test is done with them; with -exit it exits
// instead. On SIGTERM it writes, after its last numbered line, one line per stream
//
//	<id> <stream> end <lines written>
//
// so that a Pod deleted while logging still tells exactly what it wrote. With -traces N, every
// N numbered lines of a stream are followed by a Java stack trace of eight lines whose first
// names it, "<id> <stream> trace <k>" (k counts from 1 per stream), and whose last is
// "\t... 12 more": a reader that joins stack traces gives one record per trace.
//
// With -format klog every line is a klog text record, as a Kubernetes component writes it:
// the numbered and end lines follow the header "Lmmdd hh:mm:ss.uuuuuu thread loggen.go:N] "
// (L is I on stdout, E on stderr), and with -klog N every N numbered lines of a stream are
// followed by a structured record whose value spans lines, in klog's multi-line form:
//
//	I1127 21:10:00.123456       1 loggen.go:71] "Reconciled" id="<id> <stream> klog <k>" diff=<
//		-replicas: 2
//		+replicas: 3
//		 image: loggen
//	 >
//
// A reader that joins klog records gives one record per such record, the lines of diff joined.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

func main() {
	host, _ := os.Hostname()
	id := flag.String("id", host, "the first field of every line")
	rate := flag.Float64("rate", 100, "lines per second, both streams together")
	count := flag.Int("count", 0, "lines per stream, then stop writing (0: no end)")
	size := flag.Int("size", 100, "bytes per line without the newline (at least the numbered prefix)")
	streams := flag.String("streams", "both", "stdout, stderr or both")
	exit := flag.Bool("exit", false, "exit after -count lines per stream instead of waiting for SIGTERM")
	traces := flag.Int("traces", 0, "after every this many numbered lines of a stream, a Java stack trace (0: none)")
	format := flag.String("format", "plain", "plain, or klog: every line a klog text record")
	klogEvery := flag.Int("klog", 0, "with -format klog, after every this many numbered lines of a stream a record with a multi-line value (0: none)")
	flag.Parse()
	if *format != "plain" && *format != "klog" {
		fmt.Fprintln(os.Stderr, "loggen: -format must be plain or klog")
		os.Exit(2)
	}
	klog := *format == "klog"
	header := func(s string, line int) string {
		if !klog {
			return ""
		}
		return klogHeader(s, line)
	}

	outs := map[string]*bufio.Writer{}
	var order []string
	for _, s := range []string{"stdout", "stderr"} {
		if *streams != "both" && *streams != s {
			continue
		}
		f := os.Stdout
		if s == "stderr" {
			f = os.Stderr
		}
		outs[s] = bufio.NewWriterSize(f, 64<<10)
		order = append(order, s)
	}
	if len(order) == 0 || *rate <= 0 {
		fmt.Fprintln(os.Stderr, "loggen: -streams must be stdout, stderr or both and -rate positive")
		os.Exit(2)
	}

	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	seq := map[string]int{}
	interval := time.Duration(float64(time.Second) / *rate)
	start := time.Now()
	written := 0
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			for _, s := range order {
				_, _ = fmt.Fprintf(outs[s], "%s%s %s end %d\n", header(s, 64), *id, s, seq[s])
			}
			flush(outs)
			return
		case <-tick.C:
		}
		due := int(time.Since(start) / interval)
		for ; written < due; written++ {
			s := order[written%len(order)]
			if *count > 0 && seq[s] >= *count {
				continue
			}
			seq[s]++
			line := fmt.Sprintf("%s %s %d ", *id, s, seq[s])
			if pad := *size - len(line); pad > 0 {
				line += strings.Repeat("x", pad)
			}
			_, _ = outs[s].WriteString(header(s, 42))
			_, _ = outs[s].WriteString(line)
			_ = outs[s].WriteByte('\n')
			if *traces > 0 && seq[s]%*traces == 0 {
				writeTrace(outs[s], *id, s, seq[s] / *traces)
			}
			if klog && *klogEvery > 0 && seq[s]%*klogEvery == 0 {
				writeKlogRecord(outs[s], *id, s, seq[s] / *klogEvery)
			}
		}
		// One flush per tick: the runtime sees the lines of a tick together.
		flush(outs)
		if *exit && *count > 0 && finished(seq, order, *count) {
			return
		}
	}
}

func flush(outs map[string]*bufio.Writer) {
	for _, w := range outs {
		_ = w.Flush()
	}
}

// finished reports whether every stream has written count lines.
func finished(seq map[string]int, order []string, count int) bool {
	for _, s := range order {
		if seq[s] < count {
			return false
		}
	}
	return true
}

// writeTrace writes the k-th stack trace of a stream: an exception, its frames, a cause and
// the cause's elided frames, as a JVM prints them.
func writeTrace(w *bufio.Writer, id, stream string, k int) {
	_, _ = fmt.Fprintf(w, "Exception in thread \"main\" java.lang.IllegalStateException: %s %s trace %d\n", id, stream, k)
	_, _ = w.WriteString("\tat com.example.orders.OrderService.place(OrderService.java:42)\n")
	_, _ = w.WriteString("\tat com.example.orders.OrderController.post(OrderController.java:17)\n")
	_, _ = w.WriteString("\tat java.base/java.lang.Thread.run(Thread.java:1583)\n")
	_, _ = w.WriteString("Caused by: java.io.IOException: connection reset\n")
	_, _ = w.WriteString("\tat com.example.db.Pool.borrow(Pool.java:88)\n")
	_, _ = w.WriteString("\tat com.example.orders.OrderService.place(OrderService.java:40)\n")
	_, _ = w.WriteString("\t... 12 more\n")
}

// klogHeader is a klog text header for a line of the stream, stamped now (UTC, the
// container's zone), with the thread id padded to seven characters as klog does.
func klogHeader(stream string, line int) string {
	severity := "I"
	if stream == "stderr" {
		severity = "E"
	}
	return fmt.Sprintf("%s%s %7d loggen.go:%d] ", severity, time.Now().UTC().Format("0102 15:04:05.000000"), os.Getpid(), line)
}

// writeKlogRecord writes the k-th structured record of a stream whose diff value spans lines.
func writeKlogRecord(w *bufio.Writer, id, stream string, k int) {
	_, _ = fmt.Fprintf(w, "%s\"Reconciled\" id=\"%s %s klog %d\" diff=<\n", klogHeader(stream, 71), id, stream, k)
	_, _ = w.WriteString("\t-replicas: 2\n\t+replicas: 3\n\t image: loggen\n >\n")
}
