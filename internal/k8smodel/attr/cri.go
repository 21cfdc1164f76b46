// SPDX-License-Identifier: Apache-2.0

package attr

// ContainerID is, on a resource, the runtime's id of the container that wrote the data. cri_log
// takes it from the /var/log/containers symlink name.
const ContainerID = "container.id"

// CRIContinued is set on a multi-line record that continues the previous record of its stream:
// that one reached max_log_size, and records are split there rather than cut.
const CRIContinued = Prefix + "cri.continued"

func init() {
	register(Entry{
		Name: ContainerID, Origin: Semconv, Place: Resource, Type: "string",
		Writers: []string{"cri_log"}, Doc: "runtime id of the container that wrote the data",
	})
	register(Entry{
		Name: CRIContinued, Origin: Own, Place: Record, Type: "bool", Writers: []string{"cri_log"},
		Doc: "a multi-line record continuing the previous one, which reached max_log_size",
	})
}
