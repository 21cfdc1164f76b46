// SPDX-License-Identifier: Apache-2.0

package nodesim

import (
	"errors"
	"fmt"
	"time"
)

// PodIdentity names a pod the simulator writes for.
type PodIdentity struct {
	Namespace, Name, UID string
	// Format is what its container logs; empty is klog text.
	Format Format
}

// Phase is a stretch of the run with one total write rate.
type Phase struct {
	Duration       time.Duration
	LinesPerSecond float64
}

// Mix weighs the kinds of content the long-lived containers write. A container writes one of
// KlogText, KlogJSON or Plain (chosen by weight when it starts, as a real program logs one
// format); Long and Malformed are fractions of each container's lines.
type Mix struct {
	KlogText  float64
	KlogJSON  float64
	Plain     float64
	Long      float64 // fraction of lines longer than MaxLineBytes (split into partial pieces)
	Malformed float64 // fraction of malformed lines (broken klog, invalid UTF-8, lines without a CRI header)
}

// Config sets the simulated node. Zero fields take the defaults of Defaults.
type Config struct {
	Root string // directory standing for "/": files go under Root/var/log/pods
	Seed int64

	Namespaces []string // namespaces of the simulated pods
	Pods       int      // long-lived pods running from the start
	// Named are long-lived pods with identities the caller chooses (for example Pods that
	// exist in an API server), started before the generated ones. Their klog lines name the
	// pod itself (pod="<namespace>/<name>" and, where a line gives one, its uid, as a workload
	// logging about its own Pod), so a collector can correlate them with that object.
	Named            []PodIdentity
	ContainersPerPod int

	Phases []Phase // the run, phase after phase

	ShortPodsPerSecond float64       // pods created per second that live ShortPodLifetime
	ShortPodLifetime   time.Duration // default 1s
	ShortPodLines      int           // lines each short-lived container writes over its life
	PodDeleteDelay     time.Duration // from a pod's end to the removal of its log directory

	Mix           Mix
	LongLineBytes int   // length of a long line
	MaxLineBytes  int   // containerd max_container_log_line_size: longer content is split
	RotateBytes   int64 // kubelet containerLogMaxSize
	KeepFiles     int   // kubelet containerLogMaxFiles (the current file included)
	// RotateCheck is how often files are checked for rotation (kubelet: 10s).
	RotateCheck time.Duration
	// ReopenDelay is how long after kubelet renames a file the runtime reopens it (kubelet then
	// calls ReopenContainerLog; containerd creates the new file). Lines written meanwhile go
	// to the renamed file, and the new file does not exist yet.
	ReopenDelay time.Duration
	// ReopenOverlap is how long, after the runtime created the new file at its reopen, lines
	// still go to the renamed one. containerd (pkg/cri, ReopenContainerLog) opens the new file
	// first, then swaps its writers and closes the old one, whose goroutine writes the lines it
	// had already read from the container to the renamed file after the new file exists: a
	// reader that takes the new file's appearance as the end of the old one loses them. Zero
	// takes the default (20 ms); a nanosecond is, in effect, none.
	ReopenOverlap time.Duration
	// Tick is the write granularity: lines due in a tick are written together.
	Tick time.Duration
}

// Defaults are the values zero fields of Config take.
var Defaults = Config{
	Namespaces:       []string{"default", "shop", "payments", "kube-system"},
	Pods:             6,
	ContainersPerPod: 1,
	Phases:           []Phase{{Duration: 30 * time.Second, LinesPerSecond: 200}},
	ShortPodLifetime: time.Second,
	ShortPodLines:    5,
	PodDeleteDelay:   5 * time.Second,
	Mix:              Mix{KlogText: 2, KlogJSON: 1, Plain: 2, Long: 0.01},
	LongLineBytes:    40 << 10,
	MaxLineBytes:     16 << 10,
	RotateBytes:      10 << 20,
	KeepFiles:        5,
	RotateCheck:      10 * time.Second,
	ReopenDelay:      50 * time.Millisecond,
	ReopenOverlap:    20 * time.Millisecond,
	Tick:             10 * time.Millisecond,
}

func (c Config) withDefaults() Config {
	d := Defaults
	if c.Namespaces == nil {
		c.Namespaces = d.Namespaces
	}
	if c.Phases == nil {
		c.Phases = d.Phases
	}
	orDefault(&c.Pods, d.Pods)
	orDefault(&c.ContainersPerPod, d.ContainersPerPod)
	orDefault(&c.ShortPodLifetime, d.ShortPodLifetime)
	orDefault(&c.ShortPodLines, d.ShortPodLines)
	orDefault(&c.PodDeleteDelay, d.PodDeleteDelay)
	orDefault(&c.Mix, d.Mix)
	if c.Mix.KlogText+c.Mix.KlogJSON+c.Mix.Plain == 0 {
		c.Mix.KlogText, c.Mix.KlogJSON, c.Mix.Plain = d.Mix.KlogText, d.Mix.KlogJSON, d.Mix.Plain
	}
	orDefault(&c.LongLineBytes, d.LongLineBytes)
	orDefault(&c.MaxLineBytes, d.MaxLineBytes)
	orDefault(&c.RotateBytes, d.RotateBytes)
	orDefault(&c.KeepFiles, d.KeepFiles)
	orDefault(&c.RotateCheck, d.RotateCheck)
	orDefault(&c.ReopenDelay, d.ReopenDelay)
	orDefault(&c.ReopenOverlap, d.ReopenOverlap)
	orDefault(&c.Tick, d.Tick)
	return c
}

func orDefault[T comparable](v *T, d T) {
	var zero T
	if *v == zero {
		*v = d
	}
}

// Validate reports a configuration the simulator cannot run.
func (c Config) Validate() error {
	c = c.withDefaults()
	var errs []error
	if c.Root == "" {
		errs = append(errs, errors.New("root: empty"))
	}
	if len(c.Namespaces) == 0 {
		errs = append(errs, errors.New("namespaces: empty"))
	}
	for _, n := range c.Named {
		if n.Namespace == "" || n.Name == "" || n.UID == "" {
			errs = append(errs, errors.New("named pods need a namespace, a name and a uid"))
		}
	}
	if c.Pods < 0 || c.ContainersPerPod < 0 || c.ShortPodLines < 0 {
		errs = append(errs, errors.New("pods, containers per pod and short pod lines must not be negative"))
	}
	for i, p := range c.Phases {
		if p.Duration <= 0 || p.LinesPerSecond < 0 {
			errs = append(errs, fmt.Errorf("phase %d: duration must be positive and rate not negative", i))
		}
	}
	if c.Pods == 0 && c.ShortPodsPerSecond == 0 && len(c.Named) == 0 {
		errs = append(errs, errors.New("no pods: set pods or short pods per second"))
	}
	m := c.Mix
	if m.KlogText < 0 || m.KlogJSON < 0 || m.Plain < 0 || m.Long < 0 || m.Malformed < 0 || m.Long+m.Malformed > 1 {
		errs = append(errs, errors.New("mix: weights must not be negative and long + malformed at most 1"))
	}
	if c.MaxLineBytes < 256 {
		errs = append(errs, errors.New("max line bytes: at least 256"))
	}
	if c.KeepFiles < 2 {
		errs = append(errs, errors.New("keep files: at least 2 (kubelet's minimum)"))
	}
	return errors.Join(errs...)
}
