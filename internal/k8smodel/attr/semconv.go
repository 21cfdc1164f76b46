// SPDX-License-Identifier: Apache-2.0

package attr

// Semantic-convention names the project writes, with the meaning the conventions give them.
const (
	// K8sNamespaceName is, on a resource, the namespace the data came from.
	K8sNamespaceName = "k8s.namespace.name"
	// K8sPodName is, on a resource, the pod that wrote the data.
	K8sPodName = "k8s.pod.name"
	// K8sPodUID is, on a resource, the uid of the pod that wrote the data.
	K8sPodUID = "k8s.pod.uid"
	// K8sContainerName is, on a resource, the container that wrote the data.
	K8sContainerName = "k8s.container.name"
	// K8sContainerRestartCount is, on a resource, the container's restart number.
	K8sContainerRestartCount = "k8s.container.restart_count"
	// K8sNodeName is, on a resource, the node the data came from.
	K8sNodeName = "k8s.node.name"
	// K8sClusterName is, on a resource, the cluster the data came from.
	K8sClusterName = "k8s.cluster.name"
	// HostName is, on a resource, the host the data came from.
	HostName = "host.name"
	// ServiceName is, on a resource, the service that emitted the data (for the spans the
	// collector makes itself: the collector, by the name its own telemetry gives it).
	ServiceName = "service.name"

	// LogIOStream is the stream a container line was written to: stdout or stderr.
	LogIOStream = "log.iostream"
	// LogFilePath is the full path of the log file a record was read from.
	LogFilePath = "log.file.path"
	// LogRecordOriginal is the original text of a record before parsing.
	LogRecordOriginal = "log.record.original"

	// CodeFilePath is the source file that emitted a log line (klog's header).
	CodeFilePath = "code.file.path"
	// CodeLineNumber is the source line that emitted a log line.
	CodeLineNumber = "code.line.number"
	// ThreadID is the thread (klog: goroutine-free thread id) that wrote a line.
	ThreadID = "thread.id"
	// ExceptionMessage is the error a log line reports (klog's err key).
	ExceptionMessage = "exception.message"
)

func init() {
	register(
		Entry{
			Name: K8sNamespaceName, Origin: Semconv, Place: Resource, Type: "string",
			Writers: []string{"cri_log", "kube_events"}, Doc: "namespace the data came from (for events: the Event's namespace)",
		},
		Entry{
			Name: K8sPodName, Origin: Semconv, Place: Resource, Type: "string",
			Writers: []string{"cri_log"}, Doc: "pod that wrote the line",
		},
		Entry{
			Name: K8sPodUID, Origin: Semconv, Place: Resource, Type: "string",
			Writers: []string{"cri_log"}, Doc: "uid of the pod that wrote the line",
		},
		Entry{
			Name: K8sContainerName, Origin: Semconv, Place: Resource, Type: "string",
			Writers: []string{"cri_log"}, Doc: "container that wrote the line",
		},
		Entry{
			Name: K8sContainerRestartCount, Origin: Semconv, Place: Resource, Type: "int",
			Writers: []string{"cri_log"}, Doc: "the container's restart number (the log file's name)",
		},
		Entry{
			Name: K8sNodeName, Origin: Semconv, Place: Resource, Type: "string",
			Writers: []string{"cri_log", "k8s_attributes", "resource"}, Doc: "node the data came from (resource: the node agent's spans, the chart's traces pipeline)",
		},
		Entry{
			Name: K8sClusterName, Origin: Semconv, Place: Resource, Type: "string",
			Writers: []string{"kube_events", "resource"}, Doc: "cluster the data came from (configured; resource: every span, the chart's traces pipelines)",
		},
		Entry{
			Name: ServiceName, Origin: Semconv, Place: Resource, Type: "string",
			Writers: []string{"resource"}, Doc: "service that emitted the span (the chart's traces pipelines: the collector's build name where the sender set none)",
		},
		Entry{
			Name: HostName, Origin: Semconv, Place: Resource, Type: "string",
			Writers: []string{"resource_detection", "journal"}, Doc: "host the data came from (journal: _HOSTNAME)",
		},
		Entry{
			Name: LogIOStream, Origin: Semconv, Place: Record, Type: "string",
			Writers: []string{"cri_log"}, Doc: "stdout or stderr",
		},
		Entry{
			Name: LogFilePath, Origin: Semconv, Place: Record, Type: "string",
			Writers: []string{"cri_log", "journal"}, Doc: "log file the line was read from (include_file_path; journal: on the resource, the journal's active file name)",
		},
		Entry{
			Name: LogRecordOriginal, Origin: Semconv, Place: Record, Type: "string",
			Writers: []string{"klog_parser"}, Doc: "the line before parsing (keep_original)",
		},
		Entry{
			Name: CodeFilePath, Origin: Semconv, Place: Record, Type: "string",
			Writers: []string{"klog_parser"}, Doc: "source file of the log call",
		},
		Entry{
			Name: CodeLineNumber, Origin: Semconv, Place: Record, Type: "int",
			Writers: []string{"klog_parser"}, Doc: "source line of the log call",
		},
		Entry{
			Name: ThreadID, Origin: Semconv, Place: Record, Type: "int",
			Writers: []string{"klog_parser"}, Doc: "thread id of klog's text header",
		},
		Entry{
			Name: ExceptionMessage, Origin: Semconv, Place: Record, Type: "string",
			Writers: []string{"klog_parser"}, Doc: "the error a line reports (klog's err)",
		},
	)
}
