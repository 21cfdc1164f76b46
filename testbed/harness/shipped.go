// SPDX-License-Identifier: Apache-2.0

package harness

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// ShippedNodeConfigMap is the node agent's ConfigMap, relative to the repository root: the
// collector configuration the DaemonSet runs (tracing off, the chart's default).
const ShippedNodeConfigMap = "deploy/kubernetes/configmap.yaml"

// ShippedTracesNodeConfigMap is the node agent's ConfigMap of the traces set (the chart rendered
// with traces.enabled): for the runs that look at traces or at trace ids on log lines.
const ShippedTracesNodeConfigMap = "deploy/kubernetes/traces/configmap.yaml"

// Local says where a local run puts what a node and a cluster give the DaemonSet.
type Local struct {
	// NodeRoot stands for the node's "/": absolute include and exclude patterns of cri_log are
	// moved under it (/var/log/pods/... becomes NodeRoot/var/log/pods/...).
	NodeRoot string
	// StateDir replaces the directory of every file_storage extension (the node's hostPath);
	// a queue_storage extension's directory becomes the subdirectory of StateDir named like its
	// shipped directory's last element.
	StateDir string
	// Endpoint is the CloudWatch Logs endpoint URL (the local server) set on every
	// cloudwatch_groups exporter.
	Endpoint string
	// HealthAddr replaces the health_check endpoint (the pod's own port on a node).
	HealthAddr string
	// Kubeconfig, when set, is the API server (testbed/kubecluster) given to the components
	// that watch the cluster (trace_context, kube_lifecycle); empty leaves them out.
	Kubeconfig string
	// TracesEndpoint replaces the endpoint of every otlp_http exporter (an OTLP/HTTP sink);
	// required when a traces pipeline is kept.
	TracesEndpoint string
	// OTLPHTTPAddr, when set, is where the node's OTLP receiver listens for HTTP (a free port
	// otherwise; its gRPC endpoint always moves to a free port).
	OTLPHTTPAddr string
	// MetricsAddr, when set, is the host:port of the collector's own metrics: the Prometheus
	// pull reader of service::telemetry (there must be exactly one) listens there and the
	// shipped level is kept. Empty turns the collector's metrics off (the shipped port is
	// fixed, and several collectors may share one machine).
	MetricsAddr string
	// Env gives the values the DaemonSet's environment provides (K8S_NODE_NAME, AWS_REGION,
	// ...). Every ${env:NAME} the configuration uses without a default must be here.
	Env map[string]string
}

// Shipped is the node agent's configuration prepared for a local run.
type Shipped struct {
	// YAML is the configuration to pass to --config.
	YAML []byte
	// Env is the environment the configuration needs, as NAME=value.
	Env []string
	// Changes lists every change made to the shipped configuration, for a test's log.
	Changes []string
}

// clusterOnly are processor types that need a Kubernetes API server. A local run has none, so
// they are left out of the pipeline (and said so in Changes); everything else is kept as shipped.
var clusterOnly = []string{"k8s_attributes"}

// LoadShippedNodeConfig reads the node agent's collector configuration from the ConfigMap at
// configMapPath and returns it with only what depends on the environment swapped for a local run:
// paths (log directory under NodeRoot, state directory), the CloudWatch endpoint, the health
// address, the service's own metrics (moved to MetricsAddr, or off without it: several
// collectors share one machine) and the processors that need a cluster (left out). Receiver,
// processor and exporter settings are otherwise exactly as shipped. A configuration whose shape
// the loader does not know (no cri_log, no file_storage, an environment variable without a
// value) is an error rather than a silently friendlier run.
func LoadShippedNodeConfig(configMapPath string, l Local) (*Shipped, error) {
	text, cfg, err := readConfigMap(configMapPath)
	if err != nil {
		return nil, err
	}
	s := &Shipped{}
	if err := s.localize(cfg, l); err != nil {
		return nil, fmt.Errorf("%s: %w", configMapPath, err)
	}
	env, err := envFor(text, l.Env)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", configMapPath, err)
	}
	s.Env = env
	if s.YAML, err = yaml.Marshal(cfg); err != nil {
		return nil, err
	}
	return s, nil
}

// WriteShippedNodeConfig writes the localized configuration into dir and returns its path.
func (s *Shipped) WriteShippedNodeConfig(dir string) (string, error) {
	p := filepath.Join(dir, "shipped-node.yaml")
	return p, os.WriteFile(p, s.YAML, 0o600)
}

func (s *Shipped) localize(cfg map[string]any, l Local) error {
	if l.NodeRoot == "" || l.StateDir == "" || l.Endpoint == "" || l.HealthAddr == "" {
		return errors.New("NodeRoot, StateDir, Endpoint and HealthAddr are required")
	}
	var errs []error
	components := func(kind, typ string) map[string]map[string]any {
		out := map[string]map[string]any{}
		sec, _ := cfg[kind].(map[string]any)
		for id, v := range sec {
			if id != typ && !strings.HasPrefix(id, typ+"/") {
				continue
			}
			c, _ := v.(map[string]any)
			if c == nil {
				c = map[string]any{}
				sec[id] = c
			}
			out[id] = c
		}
		if len(out) == 0 {
			errs = append(errs, fmt.Errorf("no %s %s: the loader does not know this configuration's shape", typ, kind))
		}
		return out
	}
	for id, c := range components("extensions", "file_storage") {
		c["directory"] = l.StateDir
		s.note("extensions::%s::directory = the test's state directory", id)
	}
	s.localizeQueueStorage(cfg, l.StateDir)
	for id, c := range components("extensions", "health_check") {
		c["endpoint"] = l.HealthAddr
		s.note("extensions::%s::endpoint = a free local port", id)
	}
	for id, c := range components("receivers", "cri_log") {
		for _, key := range []string{"include", "exclude"} {
			list, _ := c[key].([]any)
			for i, p := range list {
				if ps, ok := p.(string); ok && filepath.IsAbs(ps) {
					list[i] = filepath.Join(l.NodeRoot, ps)
				}
			}
			if len(list) > 0 {
				s.note("receivers::%s::%s moved under the node root", id, key)
			}
		}
	}
	journalDirs := s.localizeJournal(cfg, l.NodeRoot)
	s.localizeAudit(cfg, l.NodeRoot)
	for id, c := range components("exporters", "cloudwatch_groups") {
		c["endpoint"] = l.Endpoint
		s.note("exporters::%s::endpoint = the local CloudWatch Logs server", id)
		if len(journalDirs) > 0 {
			s.localizeJournalMatchers(id, c, l.NodeRoot, journalDirs)
		}
	}
	s.dropClusterOnly(cfg)
	if err := s.localizeKube(cfg, l); err != nil {
		errs = append(errs, err)
	}
	service, _ := cfg["service"].(map[string]any)
	if service == nil {
		errs = append(errs, errors.New("no service section"))
	} else {
		if err := s.localizeMetrics(service, l.MetricsAddr); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// localizeJournal moves the directories of every journal receiver (there may be none) under
// the node root and returns the shipped ones: a local run must never read the machine's own
// journal.
func (s *Shipped) localizeJournal(cfg map[string]any, root string) []string {
	recv, _ := cfg["receivers"].(map[string]any)
	var shipped []string
	for _, id := range slices.Sorted(maps.Keys(recv)) {
		if id != "journal" && !strings.HasPrefix(id, "journal/") {
			continue
		}
		c, _ := recv[id].(map[string]any)
		if c == nil {
			c = map[string]any{}
			recv[id] = c
		}
		dirs, _ := c["directories"].([]any)
		if len(dirs) == 0 { // the receiver's default
			dirs = []any{"/var/log/journal", "/run/log/journal"}
		}
		moved := make([]any, len(dirs))
		for i, d := range dirs {
			ds, _ := d.(string)
			shipped = append(shipped, ds)
			moved[i] = filepath.Join(root, ds)
		}
		c["directories"] = moved
		s.note("receivers::%s::directories moved under the node root", id)
	}
	return shipped
}

// localizeAudit moves the include patterns of every audit_log receiver (there may be none)
// under the node root: a local run must never read the machine's audit logs. Their records are
// marked audit by the receiver itself, so the exporter needs no change.
func (s *Shipped) localizeAudit(cfg map[string]any, root string) {
	recv, _ := cfg["receivers"].(map[string]any)
	for _, id := range slices.Sorted(maps.Keys(recv)) {
		if id != "audit_log" && !strings.HasPrefix(id, "audit_log/") {
			continue
		}
		c, _ := recv[id].(map[string]any)
		if c == nil {
			c = map[string]any{}
			recv[id] = c
		}
		list, _ := c["include"].([]any)
		if len(list) == 0 { // the receiver's default
			list = []any{"/var/log/audit/audit.log*"}
		}
		for i, p := range list {
			if ps, ok := p.(string); ok && filepath.IsAbs(ps) {
				list[i] = filepath.Join(root, ps)
			}
		}
		c["include"] = list
		s.note("receivers::%s::include moved under the node root", id)
	}
}

// localizeJournalMatchers keeps journal records infrastructure logs once their files are under
// the node root: cloudwatch_groups decides the type from the path (log_type.journal_matchers,
// by default the journal directories followed by "/*"), so the patterns move with the
// directories. Shipped matchers are moved; without them the defaults are written, moved.
func (s *Shipped) localizeJournalMatchers(id string, c map[string]any, root string, dirs []string) {
	lt, _ := c["log_type"].(map[string]any)
	if lt == nil {
		lt = map[string]any{}
		c["log_type"] = lt
	}
	ms, _ := lt["journal_matchers"].([]any)
	if len(ms) == 0 {
		for _, d := range dirs {
			ms = append(ms, map[string]any{"key": "log.file.path", "pattern": d + "/*"})
		}
	}
	for _, m := range ms {
		mm, _ := m.(map[string]any)
		if p, ok := mm["pattern"].(string); ok && filepath.IsAbs(p) {
			mm["pattern"] = root + p
		}
	}
	lt["journal_matchers"] = ms
	s.note("exporters::%s::log_type::journal_matchers moved under the node root with the journal", id)
}

// localizeMetrics moves the collector's own metrics to addr, or turns them off when addr is
// empty: the shipped Prometheus reader listens on a fixed port, and several collectors on one
// machine would collide. Logs stay at the shipped level either way.
func (s *Shipped) localizeMetrics(service map[string]any, addr string) error {
	tel, _ := service["telemetry"].(map[string]any)
	if tel == nil {
		tel = map[string]any{}
		service["telemetry"] = tel
	}
	if addr == "" {
		tel["metrics"] = map[string]any{"level": "none"}
		s.note("service::telemetry::metrics::level = none (no fixed port)")
		return nil
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("MetricsAddr: %w", err)
	}
	portNum, err := strconv.Atoi(port)
	if err != nil {
		return fmt.Errorf("MetricsAddr: port %q: %w", port, err)
	}
	metrics, _ := tel["metrics"].(map[string]any)
	readers, _ := metrics["readers"].([]any)
	moved := 0
	for _, r := range readers {
		reader, _ := r.(map[string]any)
		pull, _ := reader["pull"].(map[string]any)
		exporter, _ := pull["exporter"].(map[string]any)
		prom, _ := exporter["prometheus"].(map[string]any)
		if prom == nil {
			continue
		}
		prom["host"], prom["port"] = host, portNum
		moved++
	}
	if moved != 1 {
		return fmt.Errorf("MetricsAddr is set but service::telemetry::metrics has %d Prometheus pull readers: one can be moved to it", moved)
	}
	s.note("service::telemetry::metrics: the Prometheus reader listens on %s (the shipped level is kept)", addr)
	return nil
}

// dropClusterOnly removes the processors that need a Kubernetes API server from the processors
// section and from every pipeline.
func (s *Shipped) dropClusterOnly(cfg map[string]any) {
	procs, _ := cfg["processors"].(map[string]any)
	isClusterOnly := func(id string) bool {
		typ, _, _ := strings.Cut(id, "/")
		return slices.Contains(clusterOnly, typ)
	}
	var dropped []string
	for id := range procs {
		if isClusterOnly(id) {
			delete(procs, id)
			dropped = append(dropped, id)
		}
	}
	sort.Strings(dropped)
	service, _ := cfg["service"].(map[string]any)
	pipelines, _ := service["pipelines"].(map[string]any)
	for _, p := range pipelines {
		pm, _ := p.(map[string]any)
		list, _ := pm["processors"].([]any)
		pm["processors"] = slices.DeleteFunc(list, func(v any) bool {
			id, _ := v.(string)
			return isClusterOnly(id)
		})
	}
	for _, id := range dropped {
		s.note("processors::%s left out: it needs a Kubernetes API server", id)
	}
}

func (s *Shipped) note(format string, args ...any) {
	s.Changes = append(s.Changes, fmt.Sprintf(format, args...))
}

var envRef = regexp.MustCompile(`\$\{env:([A-Za-z_][A-Za-z0-9_]*)(:-[^}]*)?\}`)

// envFor returns vals as NAME=value, and an error naming every variable the configuration text
// refers to without a default that has no value in vals.
func envFor(text string, vals map[string]string) ([]string, error) {
	var missing []string
	for _, m := range envRef.FindAllStringSubmatch(text, -1) {
		if _, ok := vals[m[1]]; !ok && m[2] == "" && !slices.Contains(missing, m[1]) {
			missing = append(missing, m[1])
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return nil, fmt.Errorf("environment variables without a value for the local run: %s", strings.Join(missing, ", "))
	}
	env := make([]string, 0, len(vals))
	for k, v := range vals {
		env = append(env, k+"="+v)
	}
	sort.Strings(env)
	return env, nil
}

// ShippedNodeDaemonSet is the node agent's DaemonSet, relative to the repository root.
const ShippedNodeDaemonSet = "deploy/kubernetes/daemonset.yaml"

// ShippedEventsDeployment is the cluster events collector's Deployment, relative to the
// repository root.
const ShippedEventsDeployment = "deploy/kubernetes/events-deployment.yaml"

// ShippedNodeEnv returns the environment variables the DaemonSet at daemonSetPath gives its
// collector container as literal values (GOMEMLIMIT, AWS_REGION, ...); variables filled from
// the pod's fields (the node name) are the caller's to supply.
func ShippedNodeEnv(daemonSetPath string) (map[string]string, error) {
	return shippedEnv(daemonSetPath, "DaemonSet")
}

// ShippedEventsEnv is ShippedNodeEnv for the events collector's Deployment (GOMAXPROCS,
// GOMEMLIMIT, ...); POD_NAME is the caller's to supply.
func ShippedEventsEnv(deploymentPath string) (map[string]string, error) {
	return shippedEnv(deploymentPath, "Deployment")
}

// shippedEnv returns the literal environment values of the one container of the workload of
// kind at path.
func shippedEnv(path, kind string) (map[string]string, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var w struct {
		Kind string `yaml:"kind"`
		Spec struct {
			Template struct {
				Spec struct {
					Containers []struct {
						Env []struct {
							Name  string  `yaml:"name"`
							Value *string `yaml:"value"`
						} `yaml:"env"`
					} `yaml:"containers"`
				} `yaml:"spec"`
			} `yaml:"template"`
		} `yaml:"spec"`
	}
	if err := yaml.Unmarshal(raw, &w); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	containers := w.Spec.Template.Spec.Containers
	if w.Kind != kind || len(containers) != 1 {
		return nil, fmt.Errorf("%s: not a %s with one container", path, kind)
	}
	env := map[string]string{}
	for _, e := range containers[0].Env {
		if e.Value != nil {
			env[e.Name] = *e.Value
		}
	}
	return env, nil
}

// localizeQueueStorage moves the directory of every queue_storage extension (there may be none)
// into stateDir, keeping its last element: the shipped configuration puts it in a subdirectory
// of the node's hostPath, beside file_storage's files, whose directory (stateDir here) its
// import_file_storage names.
func (s *Shipped) localizeQueueStorage(cfg map[string]any, stateDir string) {
	ext, _ := cfg["extensions"].(map[string]any)
	for _, id := range slices.Sorted(maps.Keys(ext)) {
		if id != queueStorageType && !strings.HasPrefix(id, queueStorageType+"/") {
			continue
		}
		c, _ := ext[id].(map[string]any)
		if c == nil {
			c = map[string]any{}
			ext[id] = c
		}
		dir, _ := c["directory"].(string)
		if dir == "" {
			dir = queueStorageType
		}
		c["directory"] = filepath.Join(stateDir, filepath.Base(dir))
		s.note("extensions::%s::directory = %s in the test's state directory", id, filepath.Base(dir))
		if _, ok := c["import_file_storage"]; ok { // file_storage's directory, the hostPath
			c["import_file_storage"] = stateDir
			s.note("extensions::%s::import_file_storage = the test's state directory", id)
		}
	}
}

// MemoryQueue is the SetQueueStorage argument that keeps the exporters' queues in memory.
const MemoryQueue = "memory"

// queueStorageType is the type of extension/queuestorageextension.
const queueStorageType = "queue_storage"

// SetQueueSize sets the queue_size of every cloudwatch_groups exporter's sending_queue (in the
// unit of its shipped sizer), for a scenario that fills the queue in seconds rather than with
// the shipped size.
func (s *Shipped) SetQueueSize(size int64) error {
	return s.editQueues(func(id string, q map[string]any) {
		q["queue_size"] = size
		s.note("exporters::%s::sending_queue::queue_size = %d", id, size)
	})
}

// editExporters calls edit with the id and settings of every cloudwatch_groups exporter and
// keeps what it changed.
func (s *Shipped) editExporters(edit func(id string, c map[string]any) error) error {
	var cfg map[string]any
	if err := yaml.Unmarshal(s.YAML, &cfg); err != nil {
		return err
	}
	exp, _ := cfg["exporters"].(map[string]any)
	n := 0
	for _, id := range slices.Sorted(maps.Keys(exp)) {
		if id != "cloudwatch_groups" && !strings.HasPrefix(id, "cloudwatch_groups/") {
			continue
		}
		c, _ := exp[id].(map[string]any)
		if c == nil {
			c = map[string]any{}
			exp[id] = c
		}
		if err := edit(id, c); err != nil {
			return err
		}
		n++
	}
	if n == 0 {
		return errors.New("no cloudwatch_groups exporter")
	}
	out, err := yaml.Marshal(cfg)
	if err != nil {
		return err
	}
	s.YAML = out
	return nil
}

// editQueues calls edit with the sending_queue settings of every cloudwatch_groups exporter.
func (s *Shipped) editQueues(edit func(id string, q map[string]any)) error {
	return s.editExporters(func(id string, c map[string]any) error {
		q, _ := c["sending_queue"].(map[string]any)
		if q == nil {
			return fmt.Errorf("exporters::%s has no sending_queue", id)
		}
		edit(id, q)
		return nil
	})
}

// SetMessageFormat sets every cloudwatch_groups exporter's message_format (json or raw), for
// measuring what the messages' bytes cost on the otherwise shipped configuration.
func (s *Shipped) SetMessageFormat(format string) error {
	if format != "json" && format != "raw" {
		return fmt.Errorf("message format %q: json or raw", format)
	}
	return s.editExporters(func(id string, c map[string]any) error {
		c["message_format"] = format
		s.note("exporters::%s::message_format = %s", id, format)
		return nil
	})
}

// SetQueueStorage makes the storage extension with id storage (file_storage or
// queue_storage, or one with a name such as queue_storage/x) hold the persistent queue of every
// cloudwatch_groups exporter, for comparing storages on the otherwise shipped configuration.
// An extension the configuration lacks is added with its directory in stateDir (a subdirectory
// named after its type for queue_storage) and listed in service::extensions. MemoryQueue keeps
// every exporter's queue in memory instead (same size; nothing survives a restart), for
// measuring what durability costs against a peer that keeps nothing.
func (s *Shipped) SetQueueStorage(storage, stateDir string) error {
	if storage == MemoryQueue {
		return s.editQueues(func(id string, q map[string]any) {
			delete(q, "storage")
			s.note("exporters::%s::sending_queue::storage removed: the queue is in memory", id)
		})
	}
	typ, _, _ := strings.Cut(storage, "/")
	if typ != "file_storage" && typ != queueStorageType {
		return fmt.Errorf("queue storage %q: file_storage, queue_storage (with an optional /name) or %s", storage, MemoryQueue)
	}
	var cfg map[string]any
	if err := yaml.Unmarshal(s.YAML, &cfg); err != nil {
		return err
	}
	ext, _ := cfg["extensions"].(map[string]any)
	service, _ := cfg["service"].(map[string]any)
	if ext == nil || service == nil {
		return errors.New("no extensions or service section")
	}
	if _, ok := ext[storage]; !ok {
		dir := stateDir
		if typ == queueStorageType {
			dir = filepath.Join(stateDir, queueStorageType)
		}
		ext[storage] = map[string]any{"directory": dir}
		list, _ := service["extensions"].([]any)
		service["extensions"] = append(list, storage)
		s.note("extensions::%s added (directory in the test's state directory)", storage)
		out, err := yaml.Marshal(cfg)
		if err != nil {
			return err
		}
		s.YAML = out
	}
	return s.editQueues(func(id string, q map[string]any) {
		q["storage"] = storage
		s.note("exporters::%s::sending_queue::storage = %s", id, storage)
	})
}
