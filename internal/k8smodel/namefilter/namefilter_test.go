// SPDX-License-Identifier: Apache-2.0

package namefilter

import (
	"fmt"
	"sync"
	"testing"
)

func TestFilter(t *testing.T) {
	tests := []struct {
		name     string
		replace  []string
		add      []string
		contains []string
	}{
		{name: "empty", contains: nil},
		{name: "added", add: []string{"web-1", "web-2"}, contains: []string{"web-1", "web-2"}},
		{name: "replaced", replace: []string{"api-0"}, contains: []string{"api-0"}},
		{name: "replaced then added", replace: []string{"api-0"}, add: []string{"db-0"}, contains: []string{"api-0", "db-0"}},
		{name: "the empty name", add: []string{""}, contains: []string{""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := New()
			if tt.replace != nil {
				f.Replace(tt.replace)
			}
			for _, n := range tt.add {
				f.Add(n)
			}
			for _, n := range tt.contains {
				if !f.MayContain("Pod", n) {
					t.Errorf("MayContain(%q) = false after it was added", n)
				}
			}
		})
	}
}

// Names that were never added mostly test negative: about 7 % with 10,000 names.
func TestFalsePositives(t *testing.T) {
	f := New()
	var names []string
	for i := range 10_000 {
		names = append(names, fmt.Sprintf("pod-%d", i))
	}
	f.Replace(names)
	positive := 0
	for i := range 100_000 {
		if f.MayContain("Pod", fmt.Sprintf("absent-%d", i)) {
			positive++
		}
	}
	if positive > 100_000/10 { // expected about 7 %
		t.Fatalf("%d of 100,000 absent names test positive", positive)
	}
	for _, n := range names {
		if !f.MayContain("Pod", n) {
			t.Fatalf("MayContain(%q) = false after Replace", n)
		}
	}
}

// Readers see every name added before their test began, also while the writer replaces the
// set (go test -race checks the accesses).
func TestReadersDuringWrites(t *testing.T) {
	f := New()
	f.Add("always")
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if !f.MayContain("Pod", "always") {
					t.Error("a name present throughout tested negative")
					return
				}
			}
		}()
	}
	for i := range 2_000 {
		f.Add(fmt.Sprintf("pod-%d", i))
		if i%100 == 0 {
			f.Replace([]string{"always", fmt.Sprintf("pod-%d", i)})
		}
	}
	close(stop)
	wg.Wait()
}

func BenchmarkMayContain(b *testing.B) {
	f := New()
	var names []string
	for i := range 10_000 {
		names = append(names, fmt.Sprintf("web-7c9d8f6b5-%05d", i))
	}
	f.Replace(names[:1000])
	i := 0
	for b.Loop() {
		f.MayContain("Pod", names[i%len(names)])
		i++
	}
}

// A filter told its kinds answers false at once for an object of a kind whose name is of no
// held kind's length, whatever its name.
func TestKinds(t *testing.T) {
	f := New()
	f.Add("node-1")
	if !f.MayContain("Node", "node-1") {
		t.Fatal("a filter of any kind: Node node-1 tested negative")
	}
	f.SetKinds([]string{"Pod", "ReplicaSet", "Deployment"})
	tests := []struct {
		kind string
		want bool
	}{
		{kind: "Pod", want: true},
		{kind: "ReplicaSet", want: true},
		{kind: "Job", want: true}, // the length of Pod: the name decides
		{kind: "Node", want: false},
		{kind: "", want: false},
	}
	for _, tt := range tests {
		if got := f.MayContain(tt.kind, "node-1"); got != tt.want {
			t.Errorf("MayContain(%q, node-1) = %v, want %v", tt.kind, got, tt.want)
		}
	}
}
