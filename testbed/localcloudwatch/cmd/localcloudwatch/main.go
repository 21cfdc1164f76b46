// SPDX-License-Identifier: Apache-2.0

// Command localcloudwatch runs the local CloudWatch Logs server.
//
//	localcloudwatch -addr 127.0.0.1:4590 -throttle-rate 0.3 -server-error-rate 0.05
//
// Point any AWS SDK at the printed endpoint (for the collector: the exporter's endpoint
// setting) with any credentials. GET /local/summary shows groups, streams and counts;
// see the package README for every endpoint.
//
//	localcloudwatch -report http://127.0.0.1:4590
//
// prints a human-readable report of a running server instead.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/otelcol-k8s/otelcol-k8s/testbed/localcloudwatch"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "localcloudwatch:", err)
		os.Exit(1)
	}
}

type options struct {
	report                                                                string
	reportEvents                                                          int
	reportOnExit                                                          bool
	addr, controlAddr, region, account, faultOps, stateDump, endpointFile string
	credentials                                                           string
	creationDelay                                                         time.Duration
	seed                                                                  uint64
	faults                                                                localcloudwatch.Faults
	latency, jitter                                                       time.Duration
	awsQuotas, allowUnsigned, discard, down                               bool
	perStream                                                             float64
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("localcloudwatch", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.addr, "addr", "127.0.0.1:4590", "address of the CloudWatch Logs API (host:port; port 0 picks a free one)")
	fs.StringVar(&o.controlAddr, "control-addr", "", "optional second address serving only /local/ (stays up while -down or POST /local/faults {\"down\":true})")
	fs.StringVar(&o.region, "region", "us-east-1", "region in returned ARNs")
	fs.StringVar(&o.account, "account", "123456789012", "account ID in returned ARNs")
	fs.Uint64Var(&o.seed, "seed", 1, "seed of the fault generator")
	fs.Float64Var(&o.faults.ThrottleRate, "throttle-rate", 0, "fraction of API requests answered ThrottlingException")
	fs.Float64Var(&o.faults.ServerErrorRate, "server-error-rate", 0, "fraction of API requests answered ServiceUnavailableException (503)")
	fs.Float64Var(&o.faults.DropRate, "drop-rate", 0, "fraction of API requests whose connection is reset unprocessed")
	fs.Float64Var(&o.faults.DropAfterRate, "drop-after-rate", 0, "fraction of API requests processed and then reset without a response")
	fs.DurationVar(&o.latency, "latency", 0, "latency added to every API request")
	fs.DurationVar(&o.jitter, "latency-jitter", 0, "uniform extra latency of up to this much")
	fs.StringVar(&o.faultOps, "fault-ops", "", "comma-separated operations the faults apply to (default: all)")
	fs.BoolVar(&o.down, "down", false, "start with the API listener down (bring it up with POST /local/faults on -control-addr)")
	fs.BoolVar(&o.awsQuotas, "aws-quotas", true, "enforce the default AWS per-account request-rate quotas")
	fs.Float64Var(&o.perStream, "put-quota-per-stream", 0, "PutLogEvents requests per second per stream (0: unlimited, as AWS today)")
	fs.BoolVar(&o.allowUnsigned, "allow-unsigned", false, "accept requests without a SigV4 Authorization header")
	fs.BoolVar(&o.discard, "discard-messages", false, "count events but do not keep their messages (long benchmarks)")
	fs.StringVar(&o.stateDump, "state-dump", "", "on exit write the /local/summary JSON to this file (- for stdout)")
	fs.StringVar(&o.credentials, "credentials", "", "comma-separated KEY=SECRET access keys: verify every request's SigV4 signature against them (default: check only the header's shape)")
	fs.DurationVar(&o.creationDelay, "creation-delay", 0, "eventual consistency: a new group or stream is not found by other operations for this long")
	fs.StringVar(&o.endpointFile, "endpoint-file", "", "write the API endpoint URL to this file once listening")
	fs.StringVar(&o.report, "report", "", "do not serve: print a report of the server at this endpoint (URL) and exit")
	fs.IntVar(&o.reportEvents, "report-events", 3, "events shown per log group in reports")
	fs.BoolVar(&o.reportOnExit, "report-on-exit", false, "print a report to stdout when stopped")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	o.faults.Latency = localcloudwatch.Duration(o.latency)
	o.faults.LatencyJitter = localcloudwatch.Duration(o.jitter)
	o.faults.Down = o.down
	if o.faultOps != "" {
		o.faults.Operations = strings.Split(o.faultOps, ",")
	}
	if err := o.faults.Validate(); err != nil {
		return o, err
	}
	if o.down && o.controlAddr == "" {
		return o, errors.New("-down needs -control-addr to bring the server up again")
	}
	return o, nil
}

func run(args []string, stdout, stderr io.Writer) error {
	o, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	if o.report != "" {
		return httpReport(stdout, o.report, o.reportEvents)
	}
	cfg := localcloudwatch.Config{
		Region: o.region, AccountID: o.account, Seed: o.seed, Faults: o.faults,
		AllowUnsigned: o.allowUnsigned, DiscardMessages: o.discard, CreationDelay: o.creationDelay,
	}
	if o.credentials != "" {
		cfg.Credentials = map[string]string{}
		for _, kv := range strings.Split(o.credentials, ",") {
			key, secret, ok := strings.Cut(kv, "=")
			if !ok || key == "" || secret == "" {
				return fmt.Errorf("-credentials: %q is not KEY=SECRET", kv)
			}
			cfg.Credentials[key] = secret
		}
	}
	cfg.Quotas = localcloudwatch.AWSQuotas()
	if !o.awsQuotas {
		cfg.Quotas = localcloudwatch.Quotas{PerAccount: map[string]float64{}} // none per account
	}
	cfg.Quotas.PutLogEventsPerStream = o.perStream
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv := localcloudwatch.New(cfg)
	endpoint, err := srv.Start(o.addr)
	if err != nil {
		return err
	}
	defer func() { _ = srv.Close() }() // on an early return; the normal path closes it below
	// Progress messages on stderr: a failed write there has nowhere to be reported.
	_, _ = fmt.Fprintf(stderr, "localcloudwatch: CloudWatch Logs API on %s (summary: %s/local/summary)\n", endpoint, endpoint)

	var control *http.Server
	if o.controlAddr != "" {
		ln, err := net.Listen("tcp", o.controlAddr)
		if err != nil {
			return fmt.Errorf("control listener: %w", err)
		}
		control = &http.Server{Handler: localOnly(srv.Handler()), ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = control.Serve(ln) }()
		defer func() { _ = control.Close() }() // only /local/ endpoints, nothing to flush
		_, _ = fmt.Fprintf(stderr, "localcloudwatch: control endpoints on http://%s/local/\n", ln.Addr())
	}
	if o.endpointFile != "" {
		if err := os.WriteFile(o.endpointFile, []byte(endpoint+"\n"), 0o644); err != nil {
			return err
		}
	}

	<-ctx.Done()
	_, _ = fmt.Fprintln(stderr, "localcloudwatch: stopping")
	_ = srv.Close()
	if o.reportOnExit {
		events := func(group, stream string, n int) ([]localcloudwatch.Event, error) {
			evs, err := srv.Events(group, stream)
			return evs[max(0, len(evs)-n):], err
		}
		if err := writeReport(stdout, srv.Summary(), events, o.reportEvents); err != nil {
			return err
		}
	}
	return dumpState(srv, o.stateDump, stdout)
}

// localOnly serves only the /local/ endpoints of h.
func localOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/local/") {
			http.NotFound(w, r)
			return
		}
		h.ServeHTTP(w, r)
	})
}

func dumpState(srv *localcloudwatch.Server, path string, stdout io.Writer) error {
	if path == "" {
		return nil
	}
	b, err := json.MarshalIndent(srv.Summary(), "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if path == "-" {
		_, err = stdout.Write(b)
		return err
	}
	return os.WriteFile(path, b, 0o644)
}
