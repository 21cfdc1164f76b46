// SPDX-License-Identifier: Apache-2.0

// Command server runs a small Kubernetes control plane for tests, in one process: an embedded
// etcd and a real kube-apiserver, both compiled from their Go modules, listening on loopback
// ports only. Nothing else of a cluster runs (no controller manager, scheduler or kubelet).
//
// Once /readyz answers OK and the system namespaces exist it writes a kubeconfig (JSON, which
// client-go reads like YAML) to the path given by -kubeconfig, with the server's CA and a bearer
// token of a cluster administrator (group system:masters), and prints one line:
//
//	ready host=https://127.0.0.1:PORT kubeconfig=PATH
//
// SIGTERM or SIGINT stops the apiserver, then etcd, and removes the temporary directory that
// held etcd's data, the certificates and the keys. testbed/kubecluster starts it for Go tests.
package main

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
)

func main() {
	kubeconfig := flag.String("kubeconfig", "", "where to write the kubeconfig once the apiserver is ready (required)")
	verbosity := flag.Int("v", 0, "kube-apiserver log verbosity (klog -v)")
	etcdLog := flag.String("etcd-log-level", "error", "embedded etcd log level: debug, info, warn, error")
	compaction := flag.Duration("etcd-compaction-interval", 0, "kube-apiserver --etcd-compaction-interval (0: its default, 5m)")
	watchCache := flag.Bool("watch-cache", true, "kube-apiserver --watch-cache: false sends watches to etcd, so a compacted resource version answers 410 Gone")
	auditPolicy := flag.String("audit-policy", "", "kube-apiserver --audit-policy-file: an audit policy (audit.k8s.io/v1); with -audit-log")
	auditLog := flag.String("audit-log", "", "kube-apiserver --audit-log-path: where the audit events go, as JSON lines, never rotated")
	flag.Parse()
	if *kubeconfig == "" {
		fmt.Fprintln(os.Stderr, "server: -kubeconfig is required")
		os.Exit(2)
	}
	var extra []string
	if *compaction > 0 {
		extra = append(extra, "--etcd-compaction-interval="+compaction.String())
	}
	if !*watchCache {
		extra = append(extra, "--watch-cache=false")
	}
	if (*auditPolicy == "") != (*auditLog == "") {
		fmt.Fprintln(os.Stderr, "server: -audit-policy and -audit-log go together")
		os.Exit(2)
	}
	if *auditLog != "" {
		// The log backend in blocking mode writes each event before the request is answered,
		// so a reader after a response sees it.
		extra = append(extra, "--audit-policy-file="+*auditPolicy, "--audit-log-path="+*auditLog,
			"--audit-log-format=json", "--audit-log-mode=blocking", "--audit-log-maxsize=0")
	}
	if err := run(*kubeconfig, *verbosity, *etcdLog, extra); err != nil {
		fmt.Fprintln(os.Stderr, "server:", err)
		os.Exit(1)
	}
}

func run(kubeconfig string, verbosity int, etcdLog string, extra []string) error {
	dir, err := os.MkdirTemp("", "kube-local-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	// The command installs the SIGTERM/SIGINT handler; its context ends on the first signal
	// (a second one exits at once). Built before etcd starts so that a signal during etcd's
	// start-up is not lost.
	cmd := app.NewAPIServerCommand()
	ctx := cmd.Context()

	etcd, err := startEtcd(ctx, filepath.Join(dir, "etcd"), etcdLog)
	if err != nil {
		return err
	}
	defer func() {
		etcd.Close()
		<-etcd.Server.StopNotify()
	}()

	token, err := randomHex(32)
	if err != nil {
		return err
	}
	tokens := filepath.Join(dir, "tokens.csv")
	if err := os.WriteFile(tokens, []byte(token+`,admin,admin-uid,"system:masters"`+"\n"), 0o600); err != nil {
		return err
	}
	saKey := filepath.Join(dir, "sa.key")
	if err := writeRSAKey(saKey); err != nil {
		return err
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	certDir := filepath.Join(dir, "certs")
	host := "https://127.0.0.1:" + strconv.Itoa(port)

	cmd.SetArgs(append([]string{
		"--etcd-servers=http://" + etcd.Clients[0].Addr().String(),
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		// The "kubernetes" service's endpoints would be the advertise address, and loopback
		// addresses are not valid endpoints: leave them alone.
		"--endpoint-reconciler-type=none",
		"--secure-port=" + strconv.Itoa(port),
		"--cert-dir=" + certDir,
		"--token-auth-file=" + tokens,
		"--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + saKey,
		"--service-account-signing-key-file=" + saKey,
		"--service-cluster-ip-range=10.0.0.0/24",
		"--v=" + strconv.Itoa(verbosity),
	}, extra...))
	cmd.SetOut(os.Stderr)
	cmd.SetErr(os.Stderr)

	apiserverDone := make(chan error, 1)
	go func() { apiserverDone <- cmd.Execute() }()

	readyCtx, stopWaiting := context.WithTimeout(ctx, 3*time.Minute)
	defer stopWaiting()
	select {
	case err := <-apiserverDone:
		if err == nil {
			err = errors.New("stopped before it was ready")
		}
		return fmt.Errorf("kube-apiserver: %w", err)
	case res := <-waitReady(readyCtx, host, filepath.Join(certDir, "apiserver.crt"), token):
		if res.err != nil {
			stopWaiting()
			if ctx.Err() == nil {
				return res.err
			}
			return <-apiserverDone // a signal ended the start-up
		}
		if err := writeKubeconfig(kubeconfig, host, res.ca, token); err != nil {
			return err
		}
		fmt.Printf("ready host=%s kubeconfig=%s\n", host, kubeconfig)
	}
	return <-apiserverDone
}

// startEtcd starts a single-member etcd on two free loopback ports and waits until it serves.
func startEtcd(ctx context.Context, dir, logLevel string) (*embed.Etcd, error) {
	cfg := embed.NewConfig()
	cfg.Name = "kube-local"
	cfg.Dir = dir
	cfg.Logger = "zap"
	cfg.LogLevel = logLevel
	cfg.LogOutputs = []string{"stderr"}
	cfg.UnsafeNoFsync = true // test data: nothing survives the process anyway
	var urls [2]url.URL
	for i := range urls {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		urls[i] = url.URL{Scheme: "http", Host: "127.0.0.1:" + strconv.Itoa(port)}
	}
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = urls[:1], urls[:1]
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = urls[1:], urls[1:]
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, fmt.Errorf("etcd: %w", err)
	}
	select {
	case <-e.Server.ReadyNotify():
		return e, nil
	case err := <-e.Err():
		e.Close()
		return nil, fmt.Errorf("etcd: %w", err)
	case <-time.After(time.Minute):
		e.Close()
		return nil, errors.New("etcd: not ready after 1m")
	case <-ctx.Done():
		e.Close()
		return nil, errors.New("etcd: stopped by a signal during start-up")
	}
}

type readiness struct {
	ca  []byte
	err error
}

// systemNamespaces are the namespaces every cluster has. kube-apiserver creates them from a
// controller that its post-start hook only starts (retrying a failed create a minute later), so
// /readyz can answer "ok" before they exist; clients (an events recorder writing about a Node
// into "default") would then be refused with 404.
var systemNamespaces = []string{"default", "kube-system", "kube-public", "kube-node-lease"}

// waitReady polls host/readyz with the token, trusting the certificate the apiserver wrote into
// its cert-dir, until it answers 200 "ok" and the system namespaces exist.
func waitReady(ctx context.Context, host, caFile, token string) <-chan readiness {
	out := make(chan readiness, 1)
	go func() {
		var last error = errors.New("no answer yet")
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				out <- readiness{err: fmt.Errorf("kube-apiserver not ready: %w (last: %v)", ctx.Err(), last)}
				return
			case <-tick.C:
			}
			ca, err := os.ReadFile(caFile)
			if err != nil {
				last = err
				continue
			}
			if last = checkReady(ctx, apiClient{host: host, ca: ca, token: token}); last == nil {
				out <- readiness{ca: ca}
				return
			}
		}
	}()
	return out
}

// checkReady returns nil once /readyz answers "ok" and the system namespaces exist, over one
// connection.
func checkReady(ctx context.Context, c apiClient) error {
	client, err := c.httpClient()
	if err != nil {
		return err
	}
	defer client.CloseIdleConnections()
	if err := readyz(ctx, c, client); err != nil {
		return err
	}
	return namespacesExist(ctx, c, client)
}

func readyz(ctx context.Context, c apiClient, client *http.Client) error {
	status, body, err := c.get(ctx, client, "/readyz")
	if err != nil {
		return err
	}
	if status != http.StatusOK || string(body) != "ok" {
		return fmt.Errorf("/readyz: %d: %.200s", status, body)
	}
	return nil
}

// namespacesExist returns an error naming the first system namespace the API does not have yet.
func namespacesExist(ctx context.Context, c apiClient, client *http.Client) error {
	for _, ns := range systemNamespaces {
		status, body, err := c.get(ctx, client, "/api/v1/namespaces/"+ns)
		if err != nil {
			return err
		}
		if status != http.StatusOK {
			return fmt.Errorf("namespace %s: %d: %.200s", ns, status, body)
		}
	}
	return nil
}

// apiClient is what the readiness checks need to reach the apiserver as its administrator.
type apiClient struct {
	host  string
	ca    []byte // PEM of the certificate the apiserver serves
	token string
}

// httpClient returns a client that trusts c.ca.
func (c apiClient) httpClient() (*http.Client, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(c.ca) {
		return nil, errors.New("no certificate in the apiserver's certificate file yet")
	}
	return &http.Client{
		Timeout:   5 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}},
	}, nil
}

// get sends an authenticated GET of path and returns the status and the start of the body.
func (c apiClient) get(ctx context.Context, client *http.Client, path string) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.host+path, nil)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return resp.StatusCode, body, nil
}

// writeKubeconfig writes the kubeconfig next to its final path and renames it there, so that a
// reader never sees a partial file.
func writeKubeconfig(path, host string, ca []byte, token string) error {
	cfg := map[string]any{
		"apiVersion":      "v1",
		"kind":            "Config",
		"current-context": "kube-local",
		"clusters": []any{map[string]any{"name": "kube-local", "cluster": map[string]any{
			"server": host, "certificate-authority-data": ca, // []byte: base64 in JSON, as kubeconfig wants
		}}},
		"users":    []any{map[string]any{"name": "admin", "user": map[string]any{"token": token}}},
		"contexts": []any{map[string]any{"name": "kube-local", "context": map[string]any{"cluster": "kube-local", "user": "admin"}}},
	}
	data, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".kubeconfig-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

func writeRSAKey(path string) error {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return err
	}
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600)
}

func randomHex(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// freePort asks the kernel for a free loopback port. Another process may take it before it is
// bound again; on this single-user test machine that race is accepted.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
