// SPDX-License-Identifier: Apache-2.0

// Package namefilter is an approximate set of Kubernetes object names that one writer keeps
// and any number of readers test without a lock. The trace_context extension publishes the
// names of the objects it can answer for, and object_ref tests a record's object against it
// before asking: a record naming an object the extension holds nothing for then costs one hash
// and one bit, not a call into the extension.
package namefilter // import "github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/namefilter"

import (
	"hash/maphash"
	"sync/atomic"
)

// words is the filter's size in 64-bit words (16 KiB, 131,072 bits), fixed so that a test
// reads the filter's first cache line and one word, nothing else: with one hash, a name never
// added tests positive with a probability of about n/131,072 for n names (1.5 % at 2,000, 7 %
// at 10,000).
const words = 1 << 11

// Filter is the set. MayContain never answers false for a name added since the last Replace
// (and for none that Replace was given); it may answer true for a name that was not.
type Filter struct {
	seed maphash.Seed
	// kinds has bit min(n, 63) set for each kind of n bytes the set may hold objects of: most
	// other kinds (a record's Node, for a source of Pods and their owners) fail at once.
	kinds atomic.Uint64
	// seq is odd while Replace rewrites the bits; a test that sees it odd, or changed, answers
	// true (the caller then asks the source itself).
	seq  atomic.Uint64
	bits [words]atomic.Uint64
}

// New returns an empty filter for objects of any kind.
func New() *Filter {
	f := &Filter{seed: maphash.MakeSeed()}
	f.kinds.Store(^uint64(0))
	return f
}

// SetKinds says the set holds objects of these kinds only (their names, such as "Pod").
func (f *Filter) SetKinds(kinds []string) {
	var m uint64
	for _, k := range kinds {
		m |= kindBit(k)
	}
	f.kinds.Store(m)
}

func kindBit(kind string) uint64 { return 1 << min(len(kind), 63) }

// bit returns the word and bit of name.
func (f *Filter) bit(name string) (*atomic.Uint64, uint64) {
	h := maphash.String(f.seed, name)
	return &f.bits[(h>>6)%words], 1 << (h & 63)
}

// MayContain reports whether the object of kind named name may be in the set; false means it
// is not.
func (f *Filter) MayContain(kind, name string) bool {
	if f.kinds.Load()&kindBit(kind) == 0 {
		return false
	}
	seq := f.seq.Load()
	w, bit := f.bit(name)
	return w.Load()&bit != 0 || seq&1 != 0 || f.seq.Load() != seq
}

// Add puts name in the set. Add and Replace are for one writer at a time.
func (f *Filter) Add(name string) {
	w, bit := f.bit(name)
	w.Or(bit)
}

// Replace makes the set exactly names. Tests made while it runs answer true.
func (f *Filter) Replace(names []string) {
	f.seq.Add(1)
	for i := range f.bits {
		f.bits[i].Store(0)
	}
	for _, name := range names {
		f.Add(name)
	}
	f.seq.Add(1)
}
