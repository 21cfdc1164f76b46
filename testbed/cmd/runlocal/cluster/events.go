// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"

	"github.com/otelcol-k8s/otelcol-k8s/testbed/harness"
	"github.com/otelcol-k8s/otelcol-k8s/testbed/localcloudwatch"
)

// eventsRun is the cluster side of `make run`: bin/kube-local, a simulated controller writing
// Events through client-go's recorders, the events collector (bin/otelcol-k8s) with the shipped
// events configuration (endpoints swapped to the local servers), and traced Pods (traced.go, on
// the node agent's build).
type eventsRun struct {
	srv      *localcloudwatch.Server // the events collector's own, so the node's accounting stays exact
	once     sync.Once
	server   *exec.Cmd
	col      *harness.Collector
	traces   *http.Server
	spans    atomic.Int64
	written  atomic.Int64
	stopCtrl context.CancelFunc
	ctrlDone chan struct{}
	traced   *tracedRun
}

// startEvents starts the cluster side; kubeBin empty or missing skips it (nil, nil).
func startEvents(ctx context.Context, kubeBin, eventsBin, nodeBin, dir string) (*eventsRun, error) {
	if kubeBin == "" {
		return nil, nil
	}
	if _, err := os.Stat(kubeBin); err != nil {
		fmt.Printf("no local API server (%v): Events left out; `make kube-bin` builds it\n", err)
		return nil, nil
	}
	e := &eventsRun{srv: localcloudwatch.New(localcloudwatch.Config{})}
	endpoint, err := e.srv.Start("127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("local CloudWatch Logs server for Events: %w", err)
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := e.startServer(ctx, kubeBin, kubeconfig, filepath.Join(dir, "kube-local.log")); err != nil {
		return nil, err
	}
	restCfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		e.stop()
		return nil, err
	}
	client, err := kubernetes.NewForConfig(restCfg)
	if err != nil {
		e.stop()
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		e.stop()
		return nil, err
	}
	e.traces = &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		e.spans.Add(1) // export requests; the spans themselves are shown by the e2e scenario
		w.Header().Set("Content-Type", "application/x-protobuf")
	})}
	go func() { _ = e.traces.Serve(ln) }()
	health, err := harness.FreeAddr()
	if err != nil {
		e.stop()
		return nil, err
	}
	shipped, err := harness.LoadShippedEventsConfig(harness.ShippedTracesEventsConfigMap, harness.EventsLocal{
		Kubeconfig: kubeconfig, Endpoint: endpoint, TracesEndpoint: "http://" + ln.Addr().String() + "/v1/traces", HealthAddr: health,
		Env: map[string]string{
			"POD_NAME": "events-local", "CLUSTER_NAME": "local", "AWS_REGION": "us-east-1",
			"AWS_ACCESS_KEY_ID": "local", "AWS_SECRET_ACCESS_KEY": "local", "AWS_EC2_METADATA_DISABLED": "true",
		},
	})
	if err != nil {
		e.stop()
		return nil, err
	}
	config := filepath.Join(dir, "events.yaml")
	if err := os.WriteFile(config, shipped.YAML, 0o600); err != nil {
		e.stop()
		return nil, err
	}
	logPath := filepath.Join(dir, "otelcol-events.log")
	if e.col, err = harness.StartCollector(eventsBin, config, shipped.Env, logPath); err != nil {
		e.stop()
		return nil, err
	}
	if err := e.prepare(ctx, client); err != nil {
		e.stop()
		return nil, err
	}
	if e.traced, err = startTraced(ctx, client, nodeBin, kubeconfig, dir); err != nil {
		e.stop()
		return nil, err
	}
	ctrlCtx, stopCtrl := context.WithCancel(ctx) //nolint:gosec // called by stop
	e.stopCtrl, e.ctrlDone = stopCtrl, make(chan struct{})
	go func() {
		defer close(e.ctrlDone)
		e.controller(ctrlCtx, client)
	}()
	fmt.Printf("local API server (%s) with a simulated controller writing Events through client-go's recorders;\n"+
		"events collector running the shipped %s (log: %s)\n", kubeBin, harness.ShippedTracesEventsConfigMap, logPath)
	return e, nil
}

// startServer runs kube-local and waits for its "ready" line.
func (e *eventsRun) startServer(ctx context.Context, kubeBin, kubeconfig, logPath string) error {
	out, err := os.Create(logPath)
	if err != nil {
		return err
	}
	cmd := exec.Command(kubeBin, "-kubeconfig", kubeconfig) //nolint:gosec // the local API server binary the run names
	cmd.Stderr = out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	e.server = cmd
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "ready ") {
				close(ready)
				break
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	select {
	case <-ready:
		return nil
	case <-ctx.Done():
		e.stop()
		return ctx.Err()
	case <-time.After(2 * time.Minute):
		e.stop()
		return fmt.Errorf("the local API server is not ready after 2m: see %s", logPath)
	}
}

// prepare creates the controller's namespace and waits until the collector watches: its first
// start reports only what happens from then on (the receiver's design.md rule 5.4).
func (e *eventsRun) prepare(ctx context.Context, client kubernetes.Interface) error {
	// client-go's recorders log every rejected or retried write to stderr: keep the run's
	// output to the report.
	klog.LogToStderr(false)
	klog.SetOutput(io.Discard)
	_, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if _, err := client.CoreV1().ConfigMaps("default").Get(ctx, "otelcol-k8s-events-checkpoint", metav1.GetOptions{}); err == nil {
			return nil
		}
		if err := e.exited(); err != nil {
			return err
		}
		if time.Now().After(deadline) {
			return errors.New("the events collector is not watching after 2m")
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// controller reports on a few Pods as kubelet and a controller do: a Scheduled singleton per
// Pod, a BackOff series (new recorder) and a legacy Unhealthy series that repeats.
func (e *eventsRun) controller(ctx context.Context, client kubernetes.Interface) {
	nb := events.NewBroadcaster(&events.EventSinkImpl{Interface: client.EventsV1()})
	if err := nb.StartRecordingToSinkWithContext(ctx); err != nil {
		return
	}
	defer nb.Shutdown()
	lb := record.NewBroadcaster()
	lb.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: client.CoreV1().Events("")})
	defer lb.Shutdown()
	newRec := nb.NewRecorder(scheme.Scheme, "local/controller")
	legacy := lb.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "kubelet", Host: "node-1"})
	tick := time.NewTicker(3 * time.Second)
	defer tick.Stop()
	for i := 0; ; i++ {
		p := &corev1.Pod{
			TypeMeta:   metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"},
			ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: fmt.Sprintf("web-%d", i%4), UID: types.UID(fmt.Sprintf("00000000-0000-4000-8000-%012d", i%4))},
		}
		if i < 4 {
			newRec.Eventf(p, nil, corev1.EventTypeNormal, "Scheduled", "Bind", "Successfully assigned shop/%s to node-1", p.Name)
			e.written.Add(1)
		}
		newRec.Eventf(p, nil, corev1.EventTypeWarning, "BackOff", "Restart", "Back-off restarting failed container app in pod %s", p.Name)
		legacy.Event(p, corev1.EventTypeWarning, "Unhealthy", "Readiness probe failed: connection refused")
		e.written.Add(2)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// status is one line for the periodic progress print.
func (e *eventsRun) status() string {
	if e == nil {
		return ""
	}
	return fmt.Sprintf(", %d Events written (%d span exports)", e.written.Load(), e.spans.Load())
}

// exited reports an events collector that ended on its own.
func (e *eventsRun) exited() error {
	if e == nil || e.col == nil {
		return nil
	}
	if done, err := e.col.Exited(); done {
		return fmt.Errorf("the events collector exited (%v)", err) //nolint:errorlint // nil after a clean exit
	}
	return e.traced.exited()
}

// report prints what arrived in the events groups.
func (e *eventsRun) report(perGroup int) {
	if e == nil {
		return
	}
	fmt.Printf("Events (events collector -> its own local CloudWatch Logs server, %d stored):\n", harness.Stored(e.srv))
	harness.Report(os.Stdout, e.srv, perGroup)
	fmt.Println()
	e.traced.report(perGroup)
}

// stop ends the controller, the collector and the servers, in that order; once.
func (e *eventsRun) stop() {
	if e == nil {
		return
	}
	e.once.Do(e.stopOnce)
}

func (e *eventsRun) stopOnce() {
	if e.stopCtrl != nil {
		e.stopCtrl()
		<-e.ctrlDone
	}
	if e.col != nil {
		if err := e.col.Stop(15 * time.Second); err != nil {
			fmt.Fprintf(os.Stderr, "events collector: %v\n", err)
		}
	}
	e.traced.stop()
	if e.traces != nil {
		_ = e.traces.Close()
	}
	if e.server != nil && e.server.Process != nil {
		_ = e.server.Process.Signal(syscall.SIGTERM)
		done := make(chan error, 1)
		go func() { done <- e.server.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = e.server.Process.Kill()
			<-done
		}
	}
	_ = e.srv.Close() // the run is over
}
