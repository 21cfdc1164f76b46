// SPDX-License-Identifier: Apache-2.0

package install

import (
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otelcol-k8s/otelcol-k8s/testbed/install/internal/testenv"
	"github.com/otelcol-k8s/otelcol-k8s/testbed/localcloudwatch"
)

// endpointVar matches the AWS SDK's service-specific endpoint variables in the documentation.
var endpointVar = regexp.MustCompile(`AWS_ENDPOINT_URL_[A-Z0-9_]+`)

// documentedEndpointVars returns the service endpoint variables values.yaml and the READMEs name.
func documentedEndpointVars(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, f := range []string{filepath.Join(ChartDir, "values.yaml"), filepath.Join(ChartDir, "README.md"), "README.md"} {
		b, err := os.ReadFile(filepath.Join(root, f))
		require.NoError(t, err)
		out = append(out, endpointVar.FindAllString(string(b), -1)...)
	}
	return slices.Compact(slices.Sorted(slices.Values(out)))
}

// recordingProxy is an HTTP(S) proxy on loopback that refuses every request and records the
// hosts asked for: given to the collector as HTTPS_PROXY, it is where a request to a public AWS
// endpoint ends (the Go HTTP client never proxies loopback addresses, so the local server is
// reached directly).
type recordingProxy struct {
	mu    sync.Mutex
	hosts []string
}

func (p *recordingProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	p.hosts = append(p.hosts, r.Host)
	p.mu.Unlock()
	http.Error(w, "the test's proxy forwards nothing", http.StatusForbidden)
}

func (p *recordingProxy) seen() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.hosts)
}

// TestDocumentedEndpointVariable runs the node agent's shipped configuration with no endpoint
// setting and the CloudWatch Logs endpoint variable the documentation names set to the local
// server: its lines must arrive there. The SDK reads AWS_ENDPOINT_URL_<service id> with the
// service id "CloudWatch Logs"; a variable named after the short name (logs) is ignored and the
// exporter goes to the public endpoint, which the second case shows (through a loopback proxy
// that refuses it, so nothing leaves the machine).
func TestDocumentedEndpointVariable(t *testing.T) {
	bin := testenv.Path(t, "OTELCOL_K8S_BIN", "run through `make test-modules` (it builds bin/otelcol-k8s)")
	documented := documentedEndpointVars(t)
	require.NotEmpty(t, documented, "values.yaml and the READMEs name the CloudWatch Logs endpoint variable")

	run := func(t *testing.T, name string) (*localcloudwatch.Server, *recordingProxy, nodeAgent) {
		t.Helper()
		srv := localcloudwatch.New(localcloudwatch.Config{})
		endpoint, err := srv.Start("127.0.0.1:0")
		require.NoError(t, err)
		t.Cleanup(func() { _ = srv.Close() })
		proxy := &recordingProxy{}
		proxyAddr := freeAddr(t)
		ps := &http.Server{Addr: proxyAddr, Handler: proxy, ReadHeaderTimeout: 5 * time.Second}
		go func() { _ = ps.ListenAndServe() }()
		t.Cleanup(func() { _ = ps.Close() })
		proxyURL := "http://" + proxyAddr
		a := startNodeAgent(t, bin, baseValues(), "", map[string]string{
			name:          endpoint,
			"HTTPS_PROXY": proxyURL, "https_proxy": proxyURL, "HTTP_PROXY": proxyURL, "http_proxy": proxyURL,
			"NO_PROXY": "", "no_proxy": "",
		})
		writePodLogs(t, a.nodeRoot, 5)
		return srv, proxy, a
	}
	for _, name := range documented {
		t.Run(name, func(t *testing.T) {
			srv, proxy, a := run(t, name)
			ok := assert.Eventually(t, func() bool { return countEvents(srv) == 10 }, 60*time.Second, 100*time.Millisecond,
				"%s does not bring the exporter to the local server", name)
			assert.Empty(t, proxy.seen(), "requests to a public endpoint")
			if !ok {
				t.Log(a.logTail())
			}
		})
	}
	t.Run("the short name is ignored", func(t *testing.T) {
		srv, proxy, a := run(t, "AWS_ENDPOINT_URL_LOGS")
		ok := assert.Eventually(t, func() bool { return slices.Contains(proxy.seen(), "logs.us-east-1.amazonaws.com:443") },
			60*time.Second, 100*time.Millisecond, "the exporter did not try the public endpoint")
		assert.Zero(t, countEvents(srv))
		if !ok {
			t.Log(a.logTail(), proxy.seen())
		}
	})
}
