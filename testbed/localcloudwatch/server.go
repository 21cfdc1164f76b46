// SPDX-License-Identifier: Apache-2.0

package localcloudwatch

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

const (
	targetPrefix   = "Logs_20140328."
	contentType    = "application/x-amz-json-1.1"
	maxRequestBody = 16 << 20
	localPrefix    = "/local/"
)

// Server is a local CloudWatch Logs server. Create it with New, serve with Start,
// stop with Close. All methods are safe for concurrent use.
type Server struct {
	cfg    Config
	limits Limits

	mu     sync.RWMutex // guards groups and everything below them
	groups map[string]*logGroup

	faultMu sync.Mutex
	faults  Faults
	rng     *rand.Rand

	limiter *limiter
	stats   *stats
	reqID   atomic.Uint64

	netMu   sync.Mutex
	addr    string // the bound address, kept to listen again after Down
	ln      net.Listener
	httpSrv *http.Server
	conns   map[net.Conn]struct{}
	serving sync.WaitGroup
	closed  bool
}

// New returns a server with cfg; it serves nothing until Start.
func New(cfg Config) *Server {
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	if cfg.AccountID == "" {
		cfg.AccountID = "123456789012"
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	cfg.Quotas = cfg.Quotas.withDefaults()
	cfg.Quotas.PerAccount = maps.Clone(cfg.Quotas.PerAccount)
	cfg.Faults.Operations = slices.Clone(cfg.Faults.Operations)
	s := &Server{
		cfg:     cfg,
		limits:  cfg.Limits.withDefaults(),
		groups:  map[string]*logGroup{},
		faults:  cfg.Faults,
		rng:     rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15)), //nolint:gosec // seeded fault injection, reproducible on purpose
		limiter: newLimiter(),
		stats:   newStats(),
		conns:   map[net.Conn]struct{}{},
	}
	return s
}

// Handler returns the server's HTTP handler: the CloudWatch Logs API on POST / and the
// inspection endpoints under /local/. Use it to mount the server in another
// http.Server; Start does this for you.
func (s *Server) Handler() http.Handler { return http.HandlerFunc(s.serveHTTP) }

// Start listens on addr ("127.0.0.1:0" picks a free port) and serves in the
// background. It returns the endpoint URL for the SDK's BaseEndpoint, such as
// "http://127.0.0.1:41234".
func (s *Server) Start(addr string) (string, error) {
	s.netMu.Lock()
	defer s.netMu.Unlock()
	if s.httpSrv != nil {
		return "", errors.New("localcloudwatch: server already started")
	}
	faults := s.Faults()
	if err := faults.Validate(); err != nil {
		return "", fmt.Errorf("localcloudwatch: faults: %w", err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("localcloudwatch: listen: %w", err)
	}
	s.addr = ln.Addr().String()
	s.httpSrv = &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ConnState:         s.trackConn,
	}
	if !faults.Down {
		s.serveLocked(ln)
	} else {
		_ = ln.Close()
	}
	return "http://" + s.addr, nil
}

// Addr returns the address the server listens on (host:port), empty before Start.
func (s *Server) Addr() string {
	s.netMu.Lock()
	defer s.netMu.Unlock()
	return s.addr
}

func (s *Server) serveLocked(ln net.Listener) {
	s.ln = ln
	s.serving.Add(1)
	go func() {
		defer s.serving.Done()
		_ = s.httpSrv.Serve(ln)
	}()
}

func (s *Server) trackConn(c net.Conn, state http.ConnState) {
	s.netMu.Lock()
	defer s.netMu.Unlock()
	switch state {
	case http.StateNew:
		s.conns[c] = struct{}{}
	case http.StateClosed, http.StateHijacked:
		delete(s.conns, c)
	}
}

// Close stops serving and closes every connection. The stored state stays readable.
func (s *Server) Close() error {
	s.netMu.Lock()
	if s.closed || s.httpSrv == nil {
		s.closed = true
		s.netMu.Unlock()
		return nil
	}
	s.closed = true
	srv := s.httpSrv
	s.netMu.Unlock()
	err := srv.Close()
	s.serving.Wait()
	return err
}

// Faults returns the faults in effect.
func (s *Server) Faults() Faults {
	s.faultMu.Lock()
	defer s.faultMu.Unlock()
	f := s.faults
	f.Operations = append([]string(nil), f.Operations...)
	return f
}

// SetFaults replaces the faults in effect. Setting Down closes the listener and every
// open connection; clearing it listens again on the same address.
func (s *Server) SetFaults(f Faults) error {
	if err := f.Validate(); err != nil {
		return err
	}
	f.Operations = append([]string(nil), f.Operations...)
	s.faultMu.Lock()
	s.faults = f
	s.faultMu.Unlock()
	return s.reconcileListener()
}

// reconcileListener opens or closes the listener to match the Down fault in effect.
func (s *Server) reconcileListener() error {
	s.netMu.Lock()
	defer s.netMu.Unlock()
	if s.httpSrv == nil || s.closed {
		return nil
	}
	down := s.Faults().Down
	switch {
	case down && s.ln != nil:
		_ = s.ln.Close()
		s.ln = nil
		for c := range s.conns {
			_ = c.Close()
			delete(s.conns, c)
		}
	case !down && s.ln == nil:
		ln, err := net.Listen("tcp", s.addr)
		if err != nil {
			return fmt.Errorf("localcloudwatch: listen again on %s: %w", s.addr, err)
		}
		s.serveLocked(ln)
	}
	return nil
}

// now returns the server clock in milliseconds.
func (s *Server) nowMillis() int64 { return s.cfg.Now().UnixMilli() }

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, localPrefix) {
		s.serveLocal(w, r)
		return
	}
	s.serveAPI(w, r)
}

// faultDecision is what fault injection decided for one request.
type faultDecision struct {
	delay     time.Duration
	drop      bool
	throttle  bool
	fail      bool
	dropAfter bool
	failAfter bool
	code      string // injected error code, answered before processing
}

func (s *Server) decideFaults(op string) faultDecision {
	s.faultMu.Lock()
	defer s.faultMu.Unlock()
	f := s.faults
	if !f.appliesTo(op) {
		return faultDecision{}
	}
	d := faultDecision{delay: time.Duration(f.Latency)}
	if f.LatencyJitter > 0 {
		d.delay += time.Duration(s.rng.Int64N(int64(f.LatencyJitter) + 1))
	}
	if f.ThrottleRate+f.ServerErrorRate+f.DropRate+f.ErrorRate > 0 {
		u := s.rng.Float64()
		switch {
		case u < f.DropRate:
			d.drop = true
		case u < f.DropRate+f.ThrottleRate:
			d.throttle = true
		case u < f.DropRate+f.ThrottleRate+f.ServerErrorRate:
			d.fail = true
		case u < f.DropRate+f.ThrottleRate+f.ServerErrorRate+f.ErrorRate:
			d.code = f.ErrorCode
		}
	}
	if f.DropAfterRate > 0 {
		d.dropAfter = s.rng.Float64() < f.DropAfterRate
	}
	if f.ServerErrorAfterRate > 0 && !d.dropAfter {
		d.failAfter = s.rng.Float64() < f.ServerErrorAfterRate
	}
	return d
}

func (s *Server) serveAPI(w http.ResponseWriter, r *http.Request) {
	target := r.Header.Get("X-Amz-Target")
	op, ok := strings.CutPrefix(target, targetPrefix)
	if r.Method != http.MethodPost || r.URL.Path != "/" || !ok || !isOperation(op) ||
		!strings.HasPrefix(r.Header.Get("Content-Type"), contentType) {
		s.writeError(w, "", &apiError{http.StatusBadRequest, CodeUnknownOperation, ""})
		return
	}
	s.stats.update(func(st *Stats) { st.Requests[op]++ })
	if err := s.checkSignature(r); err != nil {
		s.writeError(w, op, err)
		return
	}
	body, err := readBody(w, r)
	if err != nil {
		s.writeError(w, op, &apiError{http.StatusRequestEntityTooLarge, CodeSerialization, "request body too large or unreadable: " + err.Error()})
		return
	}
	if aerr := s.verifySignature(r, body); aerr != nil {
		s.writeError(w, op, aerr)
		return
	}

	fd := s.decideFaults(op)
	if fd.delay > 0 {
		t := time.NewTimer(fd.delay)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return
		}
	}
	switch {
	case fd.drop:
		s.stats.update(func(st *Stats) { st.DroppedConnections++ })
		hangUp(w)
		return
	case fd.throttle:
		s.stats.update(func(st *Stats) { st.InjectedThrottles++ })
		s.writeError(w, op, errThrottled)
		return
	case fd.fail:
		s.stats.update(func(st *Stats) { st.InjectedServerErrors++ })
		s.writeError(w, op, errUnavailable)
		return
	case fd.code != "":
		s.stats.update(func(st *Stats) { st.InjectedErrors++ })
		s.writeError(w, op, &apiError{InjectableCodes[fd.code], fd.code, "injected"})
		return
	}
	if !s.limiter.allow(op, s.cfg.Quotas.PerAccount[op]) {
		s.stats.update(func(st *Stats) { st.QuotaThrottles++ })
		s.writeError(w, op, errThrottled)
		return
	}

	out, aerr := operations[op](s, body)
	if fd.dropAfter {
		s.stats.update(func(st *Stats) { st.DroppedResponses++ })
		hangUp(w)
		return
	}
	if fd.failAfter {
		s.stats.update(func(st *Stats) { st.InjectedServerErrors++ })
		s.writeError(w, op, errUnavailable)
		return
	}
	if aerr != nil {
		if aerr == errThrottled {
			s.stats.update(func(st *Stats) { st.QuotaThrottles++ })
		}
		s.writeError(w, op, aerr)
		return
	}
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(out); err != nil {
		s.writeError(w, op, &apiError{http.StatusInternalServerError, "InternalFailure", err.Error()})
		return
	}
	s.writeHeaders(w)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(buf.Bytes())
}

// readBody reads the request body, sized from Content-Length when it is given.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	rd := http.MaxBytesReader(w, r.Body, maxRequestBody)
	if r.ContentLength <= 0 || r.ContentLength > maxRequestBody {
		return io.ReadAll(rd)
	}
	body := make([]byte, r.ContentLength)
	if _, err := io.ReadFull(rd, body); err != nil {
		return nil, err
	}
	return body, nil
}

// checkSignature accepts any request that carries a SigV4 Authorization header; the
// signature itself is verified after the body is read (verifySignature), when the server
// has Credentials.
func (s *Server) checkSignature(r *http.Request) *apiError {
	if s.cfg.AllowUnsigned {
		return nil
	}
	auth := r.Header.Get("Authorization")
	if auth == "" {
		return errMissingAuth
	}
	if !strings.HasPrefix(auth, "AWS4-HMAC-SHA256 ") || !strings.Contains(auth, "Credential=") ||
		!strings.Contains(auth, "SignedHeaders=") || !strings.Contains(auth, "Signature=") {
		return errIncompleteSig
	}
	return nil
}

func (s *Server) writeHeaders(w http.ResponseWriter) {
	n := s.reqID.Add(1)
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("x-amzn-RequestId", fmt.Sprintf("10ca1c10-0000-4000-8000-%012x", n))
}

func (s *Server) writeError(w http.ResponseWriter, _ string, e *apiError) {
	s.stats.update(func(st *Stats) {
		st.Errors[e.code]++
		if e.code == CodeThrottling {
			st.Throttles++
		}
	})
	body, _ := json.Marshal(struct {
		Type    string `json:"__type"`
		Message string `json:"message,omitempty"`
	}{e.code, e.msg})
	s.writeHeaders(w)
	w.WriteHeader(e.status)
	_, _ = w.Write(body)
}

// hangUp resets the connection (TCP RST) without writing a response, the way a load
// balancer or a crashed server drops a request.
func hangUp(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler) // HTTP/2: aborts the stream without a response
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = conn.Close()
}

// decode reads a JSON request body into in. An empty body is an empty object.
func decode(body []byte, in any) *apiError {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	if err := json.Unmarshal(body, in); err != nil {
		return &apiError{http.StatusBadRequest, CodeSerialization, "Could not parse request body: " + err.Error()}
	}
	return nil
}
