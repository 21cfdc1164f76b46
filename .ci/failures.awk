# failures.awk reads the output of `go test` (-v or not; several packages, parallel tests) and
# prints, for each failed test, the last lines it logged with a file:line prefix (where t.Errorf
# and t.Fatalf write), then any panic and, after a timeout, the tests that were running, then
# build, vet and lint findings (file.go:line:column). .ci/run prints it at the end of a failed
# step, where a long log (a test server's, a collector's) would otherwise bury the reason.

function keep(name, line) {
	n[name]++
	kept[name, n[name] % KEEP] = substr(line, 1, 1000)
}

BEGIN { KEEP = 8 }

# Which test the following lines belong to.
/^=== (RUN|CONT|NAME|PAUSE) / { current = $3; next }

# Without -v, a failed test's lines come after its "--- FAIL" line.
/^ *--- (PASS|SKIP): / { current = $3; next }
/^ *--- FAIL: / {
	current = $3
	if (!(current in failed)) {
		failed[current] = 1
		order[++nfailed] = current
	}
	next
}

/^ +[^ ]+\.go:[0-9]+: / { if (current != "") keep(current, $0); next }

/^panic: / { panics[++npanics] = $0; after = 1; next }

# After a test binary's timeout panic, the tests that were running.
after && /^\t(running tests:|\t)/ { if (after++ <= 10) panics[++npanics] = $0; next }
{ after = 0 }

# A build, vet or lint finding: path.go:line:column: message.
/^[^ \t][^ ]*\.go:[0-9]+:[0-9]+: / { if (nfindings < 20) findings[++nfindings] = substr($0, 1, 1000) }

END {
	for (i = 1; i <= nfailed; i++) {
		name = order[i]
		if (!(name in n)) continue
		print "--- " name ": its last lines"
		from = n[name] > KEEP ? n[name] - KEEP + 1 : 1
		for (j = from; j <= n[name]; j++) print kept[name, j % KEEP]
	}
	for (i = 1; i <= npanics; i++) print panics[i]
	if (nfindings > 0) print "--- build, vet or lint findings (the first 20):"
	for (i = 1; i <= nfindings; i++) print findings[i]
}
