// SPDX-License-Identifier: Apache-2.0

package localcloudwatch_test

import (
	"os"
	"testing"

	"github.com/otelcol-k8s/otelcol-k8s/internal/awsauth/mototest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	mototest.Stop()
	os.Exit(code)
}
