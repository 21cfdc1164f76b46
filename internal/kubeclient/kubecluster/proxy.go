// SPDX-License-Identifier: Apache-2.0

package kubecluster

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// Proxy is a plain-HTTP reverse proxy on loopback in front of a Cluster's API server that can
// fail the way an overloaded or restarting API server fails: answer 429 Too Many Requests with
// Retry-After, cut open watches (as a server restart or a load balancer does), answer a resumed
// watch with 410 Expired (as after etcd compacted its resource version) and refuse one kind of
// request (503 to a path, for example only the Lease's). It adds the administrator's token to
// every request.
type Proxy struct {
	// Kubeconfig is a kubeconfig (JSON) whose server is the proxy.
	Kubeconfig string
	// URL is the proxy's address, http://127.0.0.1:PORT.
	URL string

	requests   atomic.Int64
	throttled  atomic.Int64
	expired    atomic.Int64
	throttle   atomic.Int64 // requests still to answer 429
	retryAfter atomic.Int64 // seconds
	expire     atomic.Bool  // answer the next watch with 410 Expired

	mu      sync.Mutex
	watches map[*watchConn]struct{}
	refuse  string // answer 503 to requests whose path contains it ("" refuses none)
}

type watchConn struct{ cancel context.CancelFunc }

// StartProxy starts a proxy in front of c and stops it with t.Cleanup.
func StartProxy(t testing.TB, c *Cluster) *Proxy {
	t.Helper()
	p, stop, err := ServeProxy(c.Host, c.CA, c.Token, filepath.Join(t.TempDir(), "proxy-kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stop() })
	return p
}

// ServeProxy starts a proxy in front of the API server at host (its serving certificate
// verified with the PEM bundle ca), adding token to every request, and writes a kubeconfig
// for it at kubeconfig. Programs that run their own server (the benchmarks) use it; stop
// closes it.
func ServeProxy(host string, ca []byte, token, kubeconfig string) (p *Proxy, stop func() error, err error) {
	target, err := url.Parse(host)
	if err != nil {
		return nil, nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, nil, errors.New("kubecluster: no certificate in CA")
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}
	rp.FlushInterval = -1 // stream watches
	p = &Proxy{watches: map[*watchConn]struct{}{}}
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.requests.Add(1)
		if p.throttle.Load() > 0 && p.throttle.Add(-1) >= 0 {
			p.throttled.Add(1)
			w.Header().Set("Retry-After", strconv.FormatInt(p.retryAfter.Load(), 10))
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusTooManyRequests)
			_ = json.NewEncoder(w).Encode(map[string]any{
				"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "TooManyRequests",
				"message": "too many requests, please try again later", "code": http.StatusTooManyRequests,
				"details": map[string]any{"retryAfterSeconds": p.retryAfter.Load()},
			})
			return
		}
		if p.refused(r.URL.Path) {
			writeStatus(w, http.StatusServiceUnavailable, "ServiceUnavailable", "refused by the test proxy")
			return
		}
		r.Header.Set("Authorization", "Bearer "+token)
		if r.URL.Query().Get("watch") == "true" || r.URL.Query().Get("watch") == "1" {
			if r.URL.Query().Get("resourceVersion") != "" && p.expire.CompareAndSwap(true, false) {
				p.expired.Add(1)
				writeExpired(w, r.URL.Query().Get("resourceVersion"))
				return
			}
			ctx, cancel := context.WithCancel(r.Context())
			wc := &watchConn{cancel: cancel}
			p.mu.Lock()
			p.watches[wc] = struct{}{}
			p.mu.Unlock()
			defer func() {
				p.mu.Lock()
				delete(p.watches, wc)
				p.mu.Unlock()
				cancel()
			}()
			r = r.WithContext(ctx)
		}
		rp.ServeHTTP(w, r)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, err
	}
	srv := &http.Server{Handler: handler} //nolint:gosec // loopback test server
	go func() { _ = srv.Serve(ln) }()
	p.URL = "http://" + ln.Addr().String()
	p.Kubeconfig = kubeconfig
	kc := map[string]any{
		"apiVersion": "v1", "kind": "Config", "current-context": "proxy",
		"clusters": []any{map[string]any{"name": "proxy", "cluster": map[string]any{"server": p.URL}}},
		"users":    []any{map[string]any{"name": "proxy", "user": map[string]any{}}},
		"contexts": []any{map[string]any{"name": "proxy", "context": map[string]any{"cluster": "proxy", "user": "proxy"}}},
	}
	data, err := json.Marshal(kc)
	if err == nil {
		err = os.WriteFile(p.Kubeconfig, data, 0o600)
	}
	if err != nil {
		_ = srv.Close()
		return nil, nil, err
	}
	return p, srv.Close, nil
}

// ExpireNextWatch answers the next watch request that resumes from a resource version the way
// the API server answers one whose resource version was compacted: 200 and a single ERROR
// notification carrying a 410 Expired Status (the watch cache's answer), then the end of the
// stream. Requests before and after it pass through.
func (p *Proxy) ExpireNextWatch() { p.expire.Store(true) }

// Expired is the number of watches answered 410 Expired.
func (p *Proxy) Expired() int64 { return p.expired.Load() }

// Refuse answers 503 Service Unavailable to every request whose URL path contains part (for
// example "/leases/": the holder of a Lease cannot renew it while the rest of its traffic
// passes); "" lifts it.
func (p *Proxy) Refuse(part string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.refuse = part
}

func (p *Proxy) refused(path string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.refuse != "" && strings.Contains(path, p.refuse)
}

func writeStatus(w http.ResponseWriter, code int, reason, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": reason, "message": message, "code": code,
	})
}

func writeExpired(w http.ResponseWriter, rv string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"type": "ERROR",
		"object": map[string]any{
			"kind": "Status", "apiVersion": "v1", "metadata": map[string]any{}, "status": "Failure",
			"message": "too old resource version: " + rv, "reason": "Expired", "code": http.StatusGone,
		},
	})
}

// Throttle answers the next n requests with 429 and Retry-After: retryAfter seconds.
func (p *Proxy) Throttle(n, retryAfter int) {
	p.retryAfter.Store(int64(retryAfter))
	p.throttle.Store(int64(n))
}

// DropWatches cuts every open watch; it returns how many were cut.
func (p *Proxy) DropWatches() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	for wc := range p.watches {
		wc.cancel()
	}
	return len(p.watches)
}

// OpenWatches is the number of watches open through the proxy.
func (p *Proxy) OpenWatches() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.watches)
}

// Requests is the number of requests the proxy received, throttled ones included.
func (p *Proxy) Requests() int64 { return p.requests.Load() }

// Throttled is the number of requests answered 429.
func (p *Proxy) Throttled() int64 { return p.throttled.Load() }
