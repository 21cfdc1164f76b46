// SPDX-License-Identifier: Apache-2.0

package kubeclient

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

const kubeconfig = `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://127.0.0.1:6443"}
users:
- name: u
  user: {token: secret}
contexts:
- name: x
  context: {cluster: c, user: u}
current-context: x
`

func TestRestConfig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, os.WriteFile(path, []byte(kubeconfig), 0o600))
	tests := []struct {
		name      string
		opts      Options
		wantErr   bool
		wantQPS   float32
		wantBurst int
		wantUA    string
	}{
		{name: "kubeconfig, client-go defaults", opts: Options{Kubeconfig: path}, wantQPS: 0, wantBurst: 0, wantUA: ""},
		{
			name: "kubeconfig, limits and user agent", opts: Options{Kubeconfig: path, QPS: 20, Burst: 40, UserAgent: "otelcol-k8s/test"},
			wantQPS: 20, wantBurst: 40, wantUA: "otelcol-k8s/test",
		},
		{name: "missing kubeconfig", opts: Options{Kubeconfig: filepath.Join(t.TempDir(), "none")}, wantErr: true},
		{name: "in-cluster outside a Pod", opts: Options{}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.opts.Kubeconfig == "" {
				t.Setenv("KUBERNETES_SERVICE_HOST", "")
			}
			rc, err := RestConfig(tt.opts)
			if tt.wantErr {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, "https://127.0.0.1:6443", rc.Host)
			require.Equal(t, "secret", rc.BearerToken)
			require.InDelta(t, tt.wantQPS, rc.QPS, 0)
			require.Equal(t, tt.wantBurst, rc.Burst)
			require.Equal(t, tt.wantUA, rc.UserAgent)
		})
	}
}
