// SPDX-License-Identifier: Apache-2.0

package realnode

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/kube"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/otelcol-k8s/otelcol-k8s/testbed/install"
	"github.com/otelcol-k8s/otelcol-k8s/testbed/kubenode"
	"github.com/otelcol-k8s/otelcol-k8s/testbed/localcloudwatch"
)

// Environment of the real-node tests, set by `make e2e-node`.
const (
	envE2ENode = "OTELCOL_K8S_E2E_NODE"      // "1" runs them
	envKubeBin = "OTELCOL_K8S_KUBE_BIN"      // bin/kube-local
	envNodeBin = "OTELCOL_K8S_KUBE_NODE_BIN" // bin/kube-node
	envImage   = "OTELCOL_K8S_IMAGE_TAR"     // the docker tarball of `make image` for this machine
)

// The release as the tests install it.
const (
	release   = "otelcol-k8s"
	namespace = "otelcol-k8s"
	cluster   = "kubenode"
	// imageRef is what `make image` tags its image (IMAGE in the Makefile), as containerd names
	// an imported docker tarball's image.
	imageRepo = "otelcol-k8s"
	imageTag  = "0.1.0"
	awsSecret = "aws"
	// accessKey and secretKey are the local server's only credentials: every request is signed
	// and checked.
	accessKey = "realnode"
	secretKey = "realnode-secret"
)

// The kubelet's journal: the runtime journal's folder (mounted by the chart) and a machine id
// of the test node's own.
const (
	journalDir       = "/run/log/journal"
	journalMachineID = "6b75626e6f64652d7265616c6e6f6465"
)

// root is the repository root, seen from this package.
var root = filepath.Join("..", "..", "..")

// env is what every scenario shares: the node, the local CloudWatch Logs server and the release.
type env struct {
	node     *kubenode.Node
	srv      *localcloudwatch.Server
	endpoint string
	stateDir string
	helm     *action.Configuration
}

// the is the shared environment; nil when the real-node tests are not asked for.
var the *env

func TestMain(m *testing.M) {
	if os.Getenv(envE2ENode) != "1" {
		os.Exit(m.Run()) // every test skips
	}
	os.Exit(runAll(m))
}

// runAll starts the node and installs the product, runs the tests, then uninstalls, stops the
// node and checks that the host is as it was. Any failure of the frame fails the run.
func runAll(m *testing.M) (code int) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	e, err := setUp(ctx)
	if e != nil && e.node != nil {
		defer func() {
			if uerr := e.uninstall(); uerr != nil && code == 0 {
				fmt.Fprintln(os.Stderr, "uninstall:", uerr)
				code = 1
			}
			if serr := e.node.Stop(context.Background()); serr != nil {
				fmt.Fprintln(os.Stderr, "stop:", serr)
				code = 1
			}
			if left := e.node.Leftovers(); len(left) > 0 {
				fmt.Fprintln(os.Stderr, "the host after Stop:", left)
				code = 1
			}
			if e.srv != nil {
				_ = e.srv.Close()
			}
		}()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "setting up the real node:", err)
		if e != nil && e.node != nil {
			fmt.Fprintln(os.Stderr, "kubelet log ends with:\n"+e.node.Log("kubelet"))
			e.dumpProduct()
		}
		return 1
	}
	the = e
	return m.Run()
}

func setUp(ctx context.Context) (*env, error) {
	kubeBin, nodeBin := os.Getenv(envKubeBin), os.Getenv(envNodeBin)
	if kubeBin == "" || nodeBin == "" {
		return nil, fmt.Errorf("%s and %s must name bin/kube-local and bin/kube-node", envKubeBin, envNodeBin)
	}
	img := os.Getenv(envImage)
	if img == "" {
		img = filepath.Join(root, "bin", "image", "otelcol-k8s-amd64.tar")
	}
	if _, err := os.Stat(img); err != nil {
		return nil, fmt.Errorf("the image of `make image`: %w", err)
	}
	kubenodeDir := filepath.Join(root, "testbed", "kubenode")
	began := time.Now()
	cfg := kubenode.Config{KubeLocalBin: kubeBin, NodeBin: nodeBin, ModuleDir: kubenodeDir, AuditPolicy: auditPolicy}
	// The kubelet's output also goes to a journal file, as journald stores a service's, in
	// the runtime journal folder the chart mounts: the shipped journal receiver reads it.
	if remote := kubenode.JournalRemoteBin(); remote != "" {
		cfg.Journal = &kubenode.JournalOptions{RemoteBin: remote, File: filepath.Join(journalDir, journalMachineID, "system.journal")}
	}
	n, err := kubenode.Start(ctx, cfg)
	if err != nil {
		return nil, err
	}
	e := &env{node: n, stateDir: filepath.Join(n.Dir(), "otelcol-k8s-state")}
	fmt.Fprintf(os.Stderr, "node Ready after %v\n", time.Since(began).Round(100*time.Millisecond))

	loggen := filepath.Join(n.Dir(), "images", "loggen.tar")
	if err := kubenode.BuildGoImage(ctx, kubenodeDir, "./cmd/loggen", kubenode.LoggenImage, loggen); err != nil {
		return e, err
	}
	for _, tar := range []string{loggen, img} {
		if err := n.ImportImage(ctx, tar); err != nil {
			return e, err
		}
	}

	e.srv = localcloudwatch.New(localcloudwatch.Config{Credentials: map[string]string{accessKey: secretKey}})
	if e.endpoint, err = e.srv.Start("127.0.0.1:0"); err != nil {
		return e, err
	}
	for _, fn := range foreignNodes() {
		if _, err := n.Client.CoreV1().Nodes().Create(ctx, fn, metav1.CreateOptions{}); err != nil {
			return e, err
		}
	}
	began = time.Now()
	if err := e.install(ctx); err != nil {
		return e, err
	}
	fmt.Fprintf(os.Stderr, "chart installed and Ready after %v\n", time.Since(began).Round(100*time.Millisecond))
	// An events collector reports what happens after its first list (receiver/
	// kubeeventsreceiver/design.md rule 4), and Helm's wait does not say when that was: the
	// scenarios start once an Event written now arrives.
	began = time.Now()
	if err := e.waitEventsLive(ctx); err != nil {
		return e, err
	}
	fmt.Fprintf(os.Stderr, "events collector live after %v\n", time.Since(began).Round(100*time.Millisecond))
	return e, nil
}

// foreignNodes are Nodes the node agent must not target (scenario 7), registered before the
// chart is installed; no kubelet is behind them, so they would never run a Pod.
func foreignNodes() []*corev1.Node {
	return []*corev1.Node{
		{ObjectMeta: metav1.ObjectMeta{Name: "windows-node", Labels: map[string]string{"kubernetes.io/os": "windows"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "fargate-node", Labels: map[string]string{"kubernetes.io/os": "linux", "eks.amazonaws.com/compute-type": "fargate"}}},
	}
}

// values are the chart values of the tests: the shipped defaults with only what this node needs
// (its network, its API server's address, images imported rather than pulled, one events
// replica since both would want the same host ports) and where the state and the endpoint are.
func (e *env) values() map[string]any {
	return map[string]any{
		"clusterName": cluster,
		"aws":         map[string]any{"region": "us-east-1", "existingSecret": awsSecret},
		"image":       map[string]any{"repository": imageRepo, "tag": imageTag, "pullPolicy": "Never"},
		"hostNetwork": map[string]any{"enabled": true},
		"apiServer":   map[string]any{"host": e.node.APIHost, "port": strconv.Itoa(e.node.APIPort)},
		"node":        map[string]any{"hostStateDir": e.stateDir},
		"events":      map[string]any{"replicas": 1},
	}
}

// install creates the namespace and the credentials' Secret (the documented way to give static
// credentials and another endpoint), then installs the chart and waits for its workloads.
func (e *env) install(ctx context.Context) error {
	cs := e.node.Client
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: awsSecret, Namespace: namespace},
		StringData: map[string]string{
			"AWS_ACCESS_KEY_ID":                accessKey,
			"AWS_SECRET_ACCESS_KEY":            secretKey,
			"AWS_ENDPOINT_URL_CLOUDWATCH_LOGS": e.endpoint,
		},
	}
	if _, err := cs.CoreV1().Secrets(namespace).Create(ctx, secret, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	e.helm = new(action.Configuration)
	if err := e.helm.Init(kube.GetConfig(e.node.Kubeconfig, "", namespace), namespace, "secret", func(string, ...any) {}); err != nil {
		return err
	}
	ch, err := loader.Load(filepath.Join(root, install.ChartDir))
	if err != nil {
		return err
	}
	in := action.NewInstall(e.helm)
	in.ReleaseName, in.Namespace = release, namespace
	in.Wait, in.Timeout = true, 3*time.Minute
	if _, err := in.RunWithContext(ctx, ch, e.values()); err != nil {
		return fmt.Errorf("helm install: %w", err)
	}
	return nil
}

// uninstall removes the release; the namespace and the Secret the tests made go with it.
func (e *env) uninstall() error {
	if e.helm == nil {
		return nil
	}
	un := action.NewUninstall(e.helm)
	un.Wait, un.Timeout = true, 2*time.Minute
	_, err := un.Run(release)
	if err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	if err := checkUninstalled(e); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cs := e.node.Client
	for _, fn := range foreignNodes() {
		_ = cs.CoreV1().Nodes().Delete(ctx, fn.Name, metav1.DeleteOptions{})
	}
	for _, ns := range []string{namespace, workNamespace} {
		if err := cs.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	// The kubelet has stopped every Pod of the release and the workloads when their objects
	// are gone: only then may the node stop (its sandboxes would be stopped twice).
	for {
		pods, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
		if err == nil && len(pods.Items) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("Pods left after uninstall: %w", errors.Join(err, ctx.Err()))
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// need skips a test when the real-node tests are not asked for.
func need(t *testing.T) *env {
	t.Helper()
	if the == nil {
		t.Skip(envE2ENode + "=1 runs the real-node tests (make e2e-node; root, containerd and the node binaries)")
	}
	return the
}

// waitEventsLive writes an Event every second into the product's namespace until one of them
// arrives at the local server as a record of the events collector.
func (e *env) waitEventsLive(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	var uids []string
	var createErr error
	for i := 0; ; i++ {
		ev := &corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{Name: fmt.Sprintf("realnode-probe-%d", i), Namespace: namespace},
			InvolvedObject: corev1.ObjectReference{Kind: "ServiceAccount", Namespace: namespace, Name: "default", APIVersion: "v1"},
			Reason:         "RealNodeProbe", Message: "the scenarios start once this arrives", Type: corev1.EventTypeNormal,
			Source: corev1.EventSource{Component: "realnode"}, Count: 1,
			FirstTimestamp: metav1.Now(), LastTimestamp: metav1.Now(),
		}
		created, err := e.node.Client.CoreV1().Events(namespace).Create(ctx, ev, metav1.CreateOptions{})
		if err != nil {
			createErr = err
		} else {
			uids = append(uids, string(created.UID))
		}
		evs, _ := e.storedEvents() // what could be read; the next round reads again
		for _, stored := range evs {
			for _, uid := range uids {
				if strings.Contains(stored.Message, uid) {
					return nil
				}
			}
		}
		select {
		case <-ctx.Done():
			return errors.Join(fmt.Errorf("no probe Event arrived from the events collector (%d written)", len(uids)), createErr, ctx.Err())
		case <-time.After(time.Second):
		}
	}
}

// dumpProduct prints the product's Pods and the end of their containers' logs.
func (e *env) dumpProduct() {
	pods, err := e.node.Client.CoreV1().Pods(namespace).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "listing the product's Pods:", err)
		return
	}
	for _, p := range pods.Items {
		fmt.Fprintf(os.Stderr, "Pod %s: %s %v\n", p.Name, p.Status.Phase, p.Status.ContainerStatuses)
	}
	files, _ := filepath.Glob(filepath.Join("/var/log/pods", namespace+"_*", "*", "*.log"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		fmt.Fprintf(os.Stderr, "%s ends with:\n%s\n", f, strings.Join(lines[max(0, len(lines)-15):], "\n"))
	}
}
