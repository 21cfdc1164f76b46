// SPDX-License-Identifier: Apache-2.0

package mototest

import (
	"net/http"
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	code := m.Run()
	Stop()
	os.Exit(code)
}

func TestEndpointServesAndResets(t *testing.T) {
	ep := Endpoint(t)
	resp, err := http.Get(ep + "/moto-api/")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("moto answered %s", resp.Status)
	}
	if Pid() == 0 {
		t.Fatal("no moto process")
	}
	if again := Endpoint(t); again != ep {
		t.Fatalf("a second call started another server: %s, then %s", ep, again)
	}
}
