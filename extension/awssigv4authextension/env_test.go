// SPDX-License-Identifier: Apache-2.0

package awssigv4authextension

import "os"

// isolateAWSEnvironment runs before the package's tests (tests.goleak.setup in metadata.yaml):
// the generated lifecycle test and the others take what they do not configure from the
// standard chain, which must not reach the machine's configuration or a real credentials
// source.
func isolateAWSEnvironment() {
	_ = os.Setenv("AWS_REGION", "us-east-1")
	_ = os.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	_ = os.Setenv("AWS_CONFIG_FILE", os.DevNull)
	_ = os.Setenv("AWS_SHARED_CREDENTIALS_FILE", os.DevNull)
}
