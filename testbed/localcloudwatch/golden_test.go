// SPDX-License-Identifier: Apache-2.0

package localcloudwatch_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/otelcol-k8s/otelcol-k8s/testbed/localcloudwatch"
)

// golden is one recorded (or hand-written) exchange with CloudWatch Logs: steps run in order,
// each with the HTTP status and error code the service answered. Inputs may use ${prefix}
// (a fresh group-name prefix per run) and "${now}" (the current time in milliseconds).
type golden struct {
	// Source says where the answers come from: "hand-written from the API reference" until
	// someone records them from a real account (TestRecordGoldensFromAWS), then "recorded".
	Source  string       `json:"source"`
	Steps   []goldenStep `json:"steps"`
	Cleanup []string     `json:"cleanup,omitempty"` // groups to delete afterwards (real account)
}

type goldenStep struct {
	Operation string          `json:"operation"`
	Input     json.RawMessage `json:"input"`
	Status    int             `json:"status"`
	Code      string          `json:"code,omitempty"`
}

func loadGoldens(t *testing.T) map[string]golden {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "golden", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]golden{}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var g golden
		if err := json.Unmarshal(raw, &g); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out[strings.TrimSuffix(filepath.Base(f), ".json")] = g
	}
	return out
}

// caller signs and sends raw JSON-protocol calls, so the same steps run against the local
// server and a real account.
type caller struct {
	endpoint, region string
	creds            aws.Credentials
	client           *http.Client
}

func (c caller) call(t *testing.T, op string, input []byte) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint+"/", bytes.NewReader(input))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-amz-json-1.1")
	req.Header.Set("X-Amz-Target", "Logs_20140328."+op)
	sum := sha256.Sum256(input)
	if err := v4.NewSigner().SignHTTP(ctx, c.creds, req, hex.EncodeToString(sum[:]), "logs", c.region, time.Now()); err != nil {
		t.Fatal(err)
	}
	resp, err := c.client.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", op, err)
	}
	defer func() { _ = resp.Body.Close() }() // read below; nothing to report on close
	// An unreadable body leaves the code empty, which the comparison shows.
	body, _ := io.ReadAll(resp.Body)
	var e struct {
		Type string `json:"__type"`
	}
	_ = json.Unmarshal(body, &e) // success bodies have no __type
	code := e.Type
	if i := strings.LastIndexByte(code, '#'); i >= 0 {
		code = code[i+1:]
	}
	if resp.StatusCode == http.StatusOK {
		code = ""
	}
	return resp.StatusCode, code
}

func expand(input json.RawMessage, prefix string) []byte {
	s := strings.ReplaceAll(string(input), "${prefix}", prefix)
	s = strings.ReplaceAll(s, `"${now}"`, strconv.FormatInt(time.Now().UnixMilli(), 10))
	return []byte(s)
}

// TestGoldens replays every exchange in testdata/golden against the local server (quotas
// off: the steps are about semantics) and checks each answer's status and error code.
func TestGoldens(t *testing.T) {
	goldens := loadGoldens(t)
	if len(goldens) == 0 {
		t.Fatal("no golden files in testdata/golden")
	}
	for name, g := range goldens {
		t.Run(name, func(t *testing.T) {
			srv := localcloudwatch.New(localcloudwatch.Config{Quotas: localcloudwatch.Unlimited()})
			endpoint, err := srv.Start("127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = srv.Close() })
			c := caller{endpoint: endpoint, region: "us-east-1", creds: aws.Credentials{AccessKeyID: "AKIDLOCAL", SecretAccessKey: "secret"}, client: http.DefaultClient}
			for i, st := range g.Steps {
				status, code := c.call(t, st.Operation, expand(st.Input, "/golden"))
				if status != st.Status || code != st.Code {
					t.Errorf("step %d %s: local server answered %d %q, %s answered %d %q", i, st.Operation, status, code, g.Source, st.Status, st.Code)
				}
			}
		})
	}
}

// TestRecordGoldensFromAWS runs the golden steps against a real account and rewrites the files
// with AWS's answers (source "recorded"). Opt-in: CW_REAL=1 with AWS_REGION and credentials in
// AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (/ AWS_SESSION_TOKEN); it creates and deletes log
// groups under a fresh /otelcol-k8s-golden-<time> prefix. Never in CI.
func TestRecordGoldensFromAWS(t *testing.T) {
	if os.Getenv("CW_REAL") != "1" {
		t.Skip("CW_REAL=1 records AWS's answers from a real account")
	}
	region := os.Getenv("AWS_REGION")
	creds := aws.Credentials{
		AccessKeyID: os.Getenv("AWS_ACCESS_KEY_ID"), SecretAccessKey: os.Getenv("AWS_SECRET_ACCESS_KEY"),
		SessionToken: os.Getenv("AWS_SESSION_TOKEN"),
	}
	if region == "" || creds.AccessKeyID == "" || creds.SecretAccessKey == "" {
		t.Fatal("CW_REAL=1 needs AWS_REGION, AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
	}
	c := caller{endpoint: "https://logs." + region + ".amazonaws.com", region: region, creds: creds, client: &http.Client{Timeout: 30 * time.Second}}
	prefix := fmt.Sprintf("/otelcol-k8s-golden-%d", time.Now().Unix())
	for name, g := range loadGoldens(t) {
		t.Run(name, func(t *testing.T) {
			defer func() {
				for _, group := range g.Cleanup {
					in, _ := json.Marshal(map[string]string{"logGroupName": strings.ReplaceAll(group, "${prefix}", prefix)}) //nolint:errchkjson // a map of strings
					c.call(t, "DeleteLogGroup", in)
				}
			}()
			for i := range g.Steps {
				g.Steps[i].Status, g.Steps[i].Code = c.call(t, g.Steps[i].Operation, expand(g.Steps[i].Input, prefix))
			}
			g.Source = fmt.Sprintf("recorded from AWS (%s) on %s", region, time.Now().UTC().Format(time.DateOnly))
			out, err := json.MarshalIndent(g, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join("testdata", "golden", name+".json"), append(out, '\n'), 0o644); err != nil {
				t.Fatal(err)
			}
		})
	}
}
