// SPDX-License-Identifier: Apache-2.0

package attr

// ContainerID is, on a resource, the runtime's id of the container that wrote the data. cri_log
// takes it from the /var/log/containers symlink name.
const ContainerID = "container.id"

func init() {
	register(Entry{Name: ContainerID, Origin: Semconv, Place: Resource, Type: "string",
		Writers: []string{"cri_log"}, Doc: "runtime id of the container that wrote the data"})
}
