// SPDX-License-Identifier: Apache-2.0

package kubenode

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// NodeName is the name the kubelet registers its Node under.
const NodeName = "kubenode"

// Config says where the node's programs are and how the kubelet rotates container logs.
type Config struct {
	// KubeLocalBin is bin/kube-local (etcd and kube-apiserver, `make kube-bin`).
	KubeLocalBin string
	// NodeBin is bin/kube-node (kubelet, kube-scheduler, kube-controller-manager,
	// `make kube-node-bin`).
	NodeBin string
	// ModuleDir is this module's folder, where the pause image's program is built from.
	ModuleDir string
	// Dir is the scratch folder; empty: a new one under the system's temporary folder, removed
	// by Stop unless KeepDir.
	Dir     string
	KeepDir bool

	// The kubelet's container log rotation: containerLogMaxSize (default "1Mi"),
	// containerLogMaxFiles (default 3) and containerLogMonitorInterval (default 3s, its minimum).
	ContainerLogMaxSize         string
	ContainerLogMaxFiles        int
	ContainerLogMonitorInterval time.Duration

	// ReadyTimeout bounds Start (default 3 minutes).
	ReadyTimeout time.Duration

	// AuditPolicy, when set, is the API server's audit policy (an audit.k8s.io/v1 Policy in
	// YAML): its events go to AuditLog() as JSON lines.
	AuditPolicy string

	// Journal, when set, also writes the kubelet's output to a systemd journal file as
	// journald would store a service's (unit kubelet.service), so that the product's journal
	// receiver reads the real kubelet's lines. A file under /run/log/journal is removed by Stop
	// with the folders it needed.
	Journal *JournalOptions
}

// Node is a running one-node cluster.
type Node struct {
	cfg  Config
	dir  string
	host *hostState

	// Kubeconfig is the path of an administrator's kubeconfig (group system:masters).
	Kubeconfig string
	// APIHost and APIPort are the API server's loopback address: what in-cluster clients get
	// as KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT (there is no kube-proxy, and the
	// "kubernetes" Service's address leads nowhere).
	APIHost string
	APIPort int
	// Client is a client of the administrator.
	Client kubernetes.Interface
	// RESTConfig is Client's configuration.
	RESTConfig *rest.Config

	containerdSock string
	procs          []*proc // in start order; stopped in reverse
	stopOnce       sync.Once
	stopErr        error
}

// Start starts containerd, the API server, the kubelet, the scheduler and the controller
// manager under a scratch folder, and returns once the Node is Ready and the default
// ServiceAccount exists. It needs root. On error, everything started is stopped again.
func Start(ctx context.Context, cfg Config) (n *Node, err error) {
	if os.Geteuid() != 0 {
		return nil, errors.New("kubenode: the kubelet and containerd need root")
	}
	if cfg.ContainerLogMaxSize == "" {
		cfg.ContainerLogMaxSize = "1Mi"
	}
	if cfg.ContainerLogMaxFiles == 0 {
		cfg.ContainerLogMaxFiles = 3
	}
	if cfg.ContainerLogMonitorInterval == 0 {
		cfg.ContainerLogMonitorInterval = 3 * time.Second
	}
	if cfg.ReadyTimeout == 0 {
		cfg.ReadyTimeout = 3 * time.Minute
	}
	for _, b := range []string{cfg.KubeLocalBin, cfg.NodeBin} {
		if _, err := os.Stat(b); err != nil {
			return nil, fmt.Errorf("kubenode: %w", err)
		}
	}
	for _, tool := range []string{"containerd", "ctr", "runc", "containerd-shim-runc-v2"} {
		if _, err := exec.LookPath(tool); err != nil {
			return nil, fmt.Errorf("kubenode: %s not found (make node-deps installs containerd, runc and the CNI plug-ins): %w", tool, err)
		}
	}
	if _, err := os.Stat(cniBinDir + "/loopback"); err != nil {
		return nil, fmt.Errorf("kubenode: the CNI loopback plug-in (make node-deps): %w", err)
	}
	host, err := snapshotHost()
	if err != nil {
		return nil, fmt.Errorf("kubenode: %w", err)
	}
	dir := cfg.Dir
	if dir == "" {
		// Short: containerd's socket path must fit a sockaddr_un.
		if dir, err = os.MkdirTemp("", "kubenode-"); err != nil {
			return nil, err
		}
	}
	n = &Node{cfg: cfg, dir: dir, host: host}
	defer func() {
		if err != nil {
			if stopErr := n.Stop(context.Background()); stopErr != nil {
				err = fmt.Errorf("%w (and stopping: %w)", err, stopErr)
			}
			n = nil
		}
	}()
	ctx, cancel := context.WithTimeout(ctx, cfg.ReadyTimeout)
	defer cancel()

	if err := n.startContainerd(ctx); err != nil {
		return n, err
	}
	pause := filepath.Join(dir, "images", "pause.tar")
	if err := os.MkdirAll(filepath.Dir(pause), 0o755); err != nil {
		return n, err
	}
	if err := BuildGoImage(ctx, cfg.ModuleDir, "./cmd/pause", PauseImage, pause); err != nil {
		return n, fmt.Errorf("kubenode: pause image: %w", err)
	}
	if err := n.ImportImage(ctx, pause); err != nil {
		return n, err
	}
	if err := n.startAPIServer(ctx); err != nil {
		return n, err
	}
	if err := n.startNodePrograms(); err != nil {
		return n, err
	}
	if err := n.waitReady(ctx); err != nil {
		return n, err
	}
	return n, nil
}

// AuditLog is the API server's audit log (JSON lines of audit.k8s.io/v1 Events) when
// Config.AuditPolicy is set.
func (n *Node) AuditLog() string { return filepath.Join(n.dir, "logs", "audit.log") }

// Dir returns the scratch folder: the programs' logs are in Dir()/logs.
func (n *Node) Dir() string { return n.dir }

// ContainerdAddress is the socket of the node's containerd.
func (n *Node) ContainerdAddress() string { return n.containerdSock }

// ImportImage imports an image tarball (docker-archive or OCI archive) into the node's
// containerd, in the namespace the kubelet uses, so that Pods with imagePullPolicy: Never
// run it.
func (n *Node) ImportImage(ctx context.Context, tarball string) error {
	cmd := exec.CommandContext(ctx, "ctr", "--address", n.containerdSock, "-n", "k8s.io", "images", "import", "--all-platforms", tarball) //nolint:gosec // the test imports its own image tarball
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("kubenode: ctr images import %s: %w\n%s", tarball, err, b)
	}
	return nil
}

// Log returns the end (at most 16 KiB) of a program's log: "containerd", "kube-apiserver",
// "kubelet", "kube-scheduler" or "kube-controller-manager".
func (n *Node) Log(program string) string {
	b, err := os.ReadFile(filepath.Join(n.dir, "logs", program+".log"))
	if err != nil {
		return err.Error()
	}
	if len(b) > 16<<10 {
		b = b[len(b)-16<<10:]
	}
	return string(b)
}

// cniBinDir is where Debian's containernetworking-plugins puts the plug-ins.
const cniBinDir = "/usr/lib/cni"

func (n *Node) startContainerd(ctx context.Context) error {
	cd := filepath.Join(n.dir, "containerd")
	cni := filepath.Join(n.dir, "cni")
	for _, d := range []string{cd, cni, filepath.Join(n.dir, "logs")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	// Pods on the host network need no CNI at all; the plug-in list only makes containerd
	// report its network ready, and gives any other Pod a loopback interface and nothing else.
	conflist := `{"cniVersion": "1.0.0", "name": "kubenode-loopback", "plugins": [{"type": "loopback"}]}`
	if err := os.WriteFile(filepath.Join(cni, "10-loopback.conflist"), []byte(conflist), 0o644); err != nil {
		return err
	}
	n.containerdSock = filepath.Join(cd, "containerd.sock")
	config := fmt.Sprintf(`version = 2
root = %[1]q
state = %[2]q
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs"]

[grpc]
  address = %[3]q

[ttrpc]
  address = %[4]q

[plugins."io.containerd.internal.v1.opt"]
  path = %[5]q

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = %[6]q
  # Without CAP_SYS_RESOURCE (this sandbox) every Pod sandbox fails with "failed to update
  # /proc/self/oom_score_adj" unless the runtime keeps its adjustments within what it may set.
  restrict_oom_score_adj = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  enable_selinux = false

  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        Root = %[7]q
        SystemdCgroup = false

  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = %[8]q
    conf_dir = %[9]q

  # One folder per registry host (UseRegistry): a test's registry on loopback, over HTTP.
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = %[10]q
`, filepath.Join(cd, "root"), filepath.Join(cd, "state"), n.containerdSock, n.containerdSock+".ttrpc",
		filepath.Join(cd, "opt"), PauseImage, filepath.Join(cd, "runc"), cniBinDir, cni, n.registryHostsDir())
	cfgPath := filepath.Join(cd, "config.toml")
	if err := os.WriteFile(cfgPath, []byte(config), 0o600); err != nil {
		return err
	}
	p, err := n.start("containerd", "containerd", "--config", cfgPath)
	if err != nil {
		return err
	}
	return waitFor(ctx, p, "containerd's socket", func() error {
		c, err := net.Dial("unix", n.containerdSock)
		if err != nil {
			return err
		}
		return c.Close()
	})
}

func (n *Node) startAPIServer(ctx context.Context) error {
	n.Kubeconfig = filepath.Join(n.dir, "kubeconfig")
	tmp := filepath.Join(n.dir, "apiserver")
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return err
	}
	args := []string{"-kubeconfig", n.Kubeconfig}
	if n.cfg.AuditPolicy != "" {
		policy := filepath.Join(tmp, "audit-policy.yaml")
		if err := os.WriteFile(policy, []byte(n.cfg.AuditPolicy), 0o600); err != nil {
			return err
		}
		args = append(args, "-audit-policy", policy, "-audit-log", n.AuditLog())
	}
	p, err := n.startEnv("kube-apiserver", []string{"TMPDIR=" + tmp}, n.cfg.KubeLocalBin, args...)
	if err != nil {
		return err
	}
	if err := waitFor(ctx, p, "the API server's kubeconfig", func() error {
		_, err := os.Stat(n.Kubeconfig)
		return err
	}); err != nil {
		return err
	}
	rc, err := clientcmd.BuildConfigFromFlags("", n.Kubeconfig)
	if err != nil {
		return fmt.Errorf("kubenode: %w", err)
	}
	hostPort := strings.TrimPrefix(rc.Host, "https://")
	h, port, err := net.SplitHostPort(hostPort)
	if err != nil {
		return fmt.Errorf("kubenode: API server address %q: %w", rc.Host, err)
	}
	n.APIHost = h
	if n.APIPort, err = strconv.Atoi(port); err != nil {
		return err
	}
	if !net.ParseIP(h).IsLoopback() {
		return fmt.Errorf("kubenode: the API server is not on loopback: %s", rc.Host)
	}
	n.RESTConfig = rc
	n.Client, err = kubernetes.NewForConfig(rc)
	return err
}

func (n *Node) startNodePrograms() error {
	kubeletDir := filepath.Join(n.dir, "kubelet")
	if err := os.MkdirAll(kubeletDir, 0o755); err != nil {
		return err
	}
	kubeletPort, err := freePort()
	if err != nil {
		return err
	}
	healthzPort, err := freePort()
	if err != nil {
		return err
	}
	// The kubelet serves on loopback only, with nobody allowed in (no client CA, no webhook,
	// no anonymous access): nothing in these tests calls it.
	config := fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: 127.0.0.1
port: %d
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: %d
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
authorization:
  mode: AlwaysAllow
containerRuntimeEndpoint: unix://%s
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
makeIPTablesUtilChains: false
volumePluginDir: %s
containerLogMaxSize: %s
containerLogMaxFiles: %d
containerLogMonitorInterval: %s
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard:
  memory.available: "1Mi"
  nodefs.available: "1%%"
  imagefs.available: "1%%"
  nodefs.inodesFree: "1%%"
serializeImagePulls: false
`, kubeletPort, healthzPort, n.containerdSock, filepath.Join(kubeletDir, "volume-plugins"),
		n.cfg.ContainerLogMaxSize, n.cfg.ContainerLogMaxFiles, n.cfg.ContainerLogMonitorInterval)
	cfgPath := filepath.Join(kubeletDir, "config.yaml")
	if err := os.WriteFile(cfgPath, []byte(config), 0o600); err != nil {
		return err
	}
	var toJournal *pendingWriter
	if n.cfg.Journal != nil {
		toJournal = &pendingWriter{}
	}
	kubelet, err := n.startOut("kubelet", nil, toJournal, n.cfg.NodeBin, "kubelet",
		"--config="+cfgPath, "--kubeconfig="+n.Kubeconfig, "--root-dir="+kubeletDir,
		"--hostname-override="+NodeName, "--v=1")
	if err != nil {
		return err
	}
	if toJournal != nil {
		w, err := NewJournalWriter(*n.cfg.Journal, "kubelet.service", kubelet.cmd.Process.Pid)
		if err != nil {
			return err
		}
		kubelet.journal = w
		toJournal.set(w)
	}
	if _, err := n.start("kube-scheduler", n.cfg.NodeBin, "kube-scheduler",
		"--kubeconfig="+n.Kubeconfig, "--authentication-kubeconfig="+n.Kubeconfig, "--authorization-kubeconfig="+n.Kubeconfig,
		"--secure-port=0", "--leader-elect=false"); err != nil {
		return err
	}
	_, err = n.start("kube-controller-manager", n.cfg.NodeBin, "kube-controller-manager",
		"--kubeconfig="+n.Kubeconfig, "--authentication-kubeconfig="+n.Kubeconfig, "--authorization-kubeconfig="+n.Kubeconfig,
		"--secure-port=0", "--leader-elect=false", "--use-service-account-credentials=false")
	return err
}

// waitReady waits for the Node to be Ready and for the default ServiceAccount (the API refuses
// Pods in a namespace before its ServiceAccount exists).
func (n *Node) waitReady(ctx context.Context) error {
	var last error
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		last = n.checkReady(ctx)
		if last == nil {
			return nil
		}
		for _, p := range n.procs {
			select {
			case <-p.done:
				return fmt.Errorf("kubenode: %s exited during start-up: %w\n%s", p.name, p.err, n.Log(p.name))
			default:
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("kubenode: not ready: %w (last: %w)\nkubelet log:\n%s", ctx.Err(), last, n.Log("kubelet"))
		case <-tick.C:
		}
	}
}

func (n *Node) checkReady(ctx context.Context) error {
	node, err := n.Client.CoreV1().Nodes().Get(ctx, NodeName, metav1.GetOptions{})
	if err != nil {
		return err
	}
	ready := false
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
			ready = true
		}
	}
	if !ready {
		return fmt.Errorf("node %s not Ready", NodeName)
	}
	if _, err := n.Client.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{}); err != nil {
		if apierrors.IsNotFound(err) {
			return errors.New("no default ServiceAccount yet")
		}
		return err
	}
	return nil
}

// proc is a program of the node.
type proc struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}
	err  error
	log  *os.File
	// journal, when set, receives the output too; it is closed once the program ended.
	journal *JournalWriter
}

func (n *Node) start(name, bin string, args ...string) (*proc, error) {
	return n.startEnv(name, nil, bin, args...)
}

func (n *Node) startEnv(name string, env []string, bin string, args ...string) (*proc, error) {
	return n.startOut(name, env, nil, bin, args...)
}

// startOut starts a program with its output in its log file and, when also is set, in also.
func (n *Node) startOut(name string, env []string, also *pendingWriter, bin string, args ...string) (*proc, error) {
	log, err := os.OpenFile(filepath.Join(n.dir, "logs", name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...) //nolint:gosec // the node's own programs
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = log, log
	if also != nil {
		out := io.MultiWriter(log, also)
		cmd.Stdout, cmd.Stderr = out, out
	}
	// Its own process group, so that a Ctrl-C at the terminal reaches only this program's
	// parent, which stops the node in order.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		_ = log.Close()
		return nil, fmt.Errorf("kubenode: start %s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, done: make(chan struct{}), log: log}
	go func() {
		p.err = cmd.Wait()
		_ = log.Close()
		if p.journal != nil {
			if err := p.journal.Close(); err != nil && p.err == nil {
				p.err = err
			}
		}
		close(p.done)
	}()
	n.procs = append(n.procs, p)
	return p, nil
}

// stop sends SIGTERM, waits up to grace, then kills.
func (p *proc) stop(grace time.Duration) error {
	select {
	case <-p.done:
		return nil
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		return nil
	case <-time.After(grace):
	}
	_ = p.cmd.Process.Kill()
	<-p.done
	return fmt.Errorf("%s did not stop within %v of SIGTERM and was killed", p.name, grace)
}

func waitFor(ctx context.Context, p *proc, what string, check func() error) error {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		err := check()
		if err == nil {
			return nil
		}
		select {
		case <-p.done:
			return fmt.Errorf("kubenode: %s exited before %s: %w", p.name, what, p.err)
		case <-ctx.Done():
			return fmt.Errorf("kubenode: waiting for %s: %w (last: %w)", what, ctx.Err(), err)
		case <-tick.C:
		}
	}
}

// freePort asks the kernel for a free loopback port.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// processesMentioning returns the processes whose command line contains s (a program of the
// node names its scratch folder in its arguments; a containerd shim names the socket).
func processesMentioning(s string) []string {
	entries, _ := os.ReadDir("/proc")
	var out []string
	self := os.Getpid()
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !strings.Contains(string(b), s) {
			continue
		}
		out = append(out, fmt.Sprintf("%d %s", pid, strings.ReplaceAll(strings.TrimRight(string(b), "\x00"), "\x00", " ")))
	}
	return out
}
