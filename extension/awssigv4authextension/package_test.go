// SPDX-License-Identifier: Apache-2.0

package awssigv4authextension

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// The generated lifecycle test starts the default configuration, which takes the Region
	// from the chain; no test may reach a real credentials source.
	_ = os.Setenv("AWS_REGION", "us-east-1")
	_ = os.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	_ = os.Setenv("AWS_CONFIG_FILE", os.DevNull)
	_ = os.Setenv("AWS_SHARED_CREDENTIALS_FILE", os.DevNull)
	goleak.VerifyTestMain(m)
}
