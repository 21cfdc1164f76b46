// SPDX-License-Identifier: Apache-2.0

package attr

import semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

func init() { pinned[ContainerID] = semconv.ContainerIDKey }
