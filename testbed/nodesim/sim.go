// SPDX-License-Identifier: Apache-2.0

package nodesim

import (
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"k8s.io/klog/v2"
)

// ContainerRecord is what one container wrote.
type ContainerRecord struct {
	ID         string `json:"id"`
	Namespace  string `json:"namespace"`
	Pod        string `json:"pod"`
	UID        string `json:"uid"`
	Container  string `json:"container"`
	Restart    int    `json:"restart"`
	Format     Format `json:"format"`
	ShortLived bool   `json:"shortLived,omitempty"`
	Lines      int64  `json:"lines"`     // sequences 1..Lines were written
	Long       int64  `json:"long"`      // lines split into partial pieces
	Malformed  int64  `json:"malformed"` // malformed lines
	Bytes      int64  `json:"bytes"`     // bytes written to its files
	Rotations  int    `json:"rotations"`
	Deleted    bool   `json:"deleted,omitempty"` // its pod's log directory was removed
	// Unstamped lists the sequences written without a CRI header, so without a timestamp: a
	// collector can only give them the time it read them, and no order by timestamp holds.
	Unstamped []int64 `json:"unstamped,omitempty"`
}

// StreamKey names the container's log file the way the cri_log receiver's attributes do:
// <namespace>_<pod>_<uid>_<container>_<restart>.
func (r ContainerRecord) StreamKey() string {
	return fmt.Sprintf("%s_%s_%s_%s_%d", r.Namespace, r.Pod, r.UID, r.Container, r.Restart)
}

// Ledger accounts for everything a run wrote.
type Ledger struct {
	Containers  []ContainerRecord `json:"containers"`
	Lines       int64             `json:"lines"`     // log entries (tokens) written
	FileLines   int64             `json:"fileLines"` // lines in the files: partial pieces count one each
	Bytes       int64             `json:"bytes"`
	Rotations   int               `json:"rotations"`
	Compressed  int               `json:"compressed"`
	Removed     int               `json:"removed"` // rotated files removed beyond KeepFiles
	PodsCreated int               `json:"podsCreated"`
	PodsDeleted int               `json:"podsDeleted"`
}

// Sim is a simulated node. Run it once.
type Sim struct {
	cfg  Config
	rnd  *rand.Rand
	node string

	mu         sync.Mutex
	containers []*container // every container ever started, in start order
	live       []*container // containers of running long-lived pods
	short      []*shortPod
	deletions  []deletion
	ledger     Ledger
	nextID     int
}

type container struct {
	rec  ContainerRecord
	dir  string // .../<ns>_<pod>_<uid>/<container>
	path string // current file
	f    *os.File
	size int64
	prod *producer
	line []byte
	// reopenAt is when the runtime reopens the file after a rotation (zero: not rotating); until
	// then f is the renamed file.
	reopenAt time.Time
	// next is the new file the runtime created at its reopen while f, the renamed file, still
	// takes lines until swapAt (Config.ReopenOverlap); nil outside that window.
	next   *os.File
	swapAt time.Time
}

type shortPod struct {
	c       *container
	start   time.Time
	written int
}

type deletion struct {
	at  time.Time
	dir string
	cs  []*container
}

// New returns a simulator for cfg.
func New(cfg Config) (*Sim, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	return &Sim{cfg: cfg, rnd: rand.New(rand.NewPCG(uint64(cfg.Seed), 0x6e6f646573696d)), node: "node-1"}, nil //nolint:gosec // a seeded, reproducible simulation, not a secret
}

// PodsDir is the directory holding the pod log directories (Root/var/log/pods).
func (s *Sim) PodsDir() string { return filepath.Join(s.cfg.Root, "var", "log", "pods") }

// Ledger returns what was written so far.
func (s *Sim) Ledger() Ledger {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.ledger
	l.Containers = make([]ContainerRecord, len(s.containers))
	for i, c := range s.containers {
		l.Containers[i] = c.rec
	}
	return l
}

// Run writes the phases, then lets short-lived pods end and their directories be removed, closes
// every file and returns the ledger. Canceling ctx ends the run early (files stay consistent:
// every line written is complete).
func (s *Sim) Run(ctx context.Context) (Ledger, error) {
	if err := os.MkdirAll(s.PodsDir(), 0o755); err != nil {
		return Ledger{}, err
	}
	for _, id := range s.cfg.Named {
		if err := s.startNamed(id); err != nil {
			return s.Ledger(), err
		}
	}
	for i := 0; i < s.cfg.Pods; i++ {
		if _, err := s.startPod(false); err != nil {
			return s.Ledger(), err
		}
	}
	err := s.loop(ctx)
	if err == nil {
		err = s.drain(ctx)
	}
	s.mu.Lock()
	for _, c := range s.containers {
		c.closeFiles()
	}
	s.mu.Unlock()
	return s.Ledger(), err
}

func (s *Sim) loop(ctx context.Context) error {
	tick := time.NewTicker(s.cfg.Tick)
	defer tick.Stop()
	lastRotate := time.Now()
	for _, ph := range s.cfg.Phases {
		start := time.Now()
		var due, shortDue float64
		var written int64
		var shortStarted int
		for {
			now := time.Now()
			el := now.Sub(start)
			if el > ph.Duration {
				el = ph.Duration
			}
			due = ph.LinesPerSecond * el.Seconds()
			shortDue = s.cfg.ShortPodsPerSecond * el.Seconds()
			if err := s.step(now, int64(due)-written, int(shortDue)-shortStarted); err != nil {
				return err
			}
			written, shortStarted = int64(due), int(shortDue)
			if now.Sub(lastRotate) >= s.cfg.RotateCheck {
				lastRotate = now
				if err := s.rotateAll(now); err != nil {
					return err
				}
			}
			if el >= ph.Duration {
				break
			}
			select {
			case <-ctx.Done():
				return nil
			case <-tick.C:
			}
		}
	}
	return nil
}

// drain lets short-lived pods finish and waits for the scheduled directory removals.
func (s *Sim) drain(ctx context.Context) error {
	tick := time.NewTicker(s.cfg.Tick)
	defer tick.Stop()
	for {
		now := time.Now()
		if err := s.step(now, 0, 0); err != nil {
			return err
		}
		s.mu.Lock()
		pending := len(s.short) + len(s.deletions)
		s.mu.Unlock()
		if pending == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// step writes n lines across the long-lived containers, starts newShort short-lived pods, lets
// short-lived pods write what is due and removes the directories whose time has come.
func (s *Sim) step(now time.Time, n int64, newShort int) error {
	for i := 0; i < newShort; i++ {
		c, err := s.startPod(true)
		if err != nil {
			return err
		}
		s.mu.Lock()
		s.short = append(s.short, &shortPod{c: c, start: now})
		s.mu.Unlock()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.containers {
		if err := c.reopenIfDue(now, s.cfg.ReopenOverlap); err != nil {
			return err
		}
	}
	for ; n > 0 && len(s.live) > 0; n-- {
		if err := s.writeLine(s.live[s.rnd.IntN(len(s.live))]); err != nil {
			return err
		}
	}
	keep := s.short[:0]
	for _, sp := range s.short {
		life := s.cfg.ShortPodLifetime
		want := s.cfg.ShortPodLines
		if el := now.Sub(sp.start); el < life {
			want = int(float64(s.cfg.ShortPodLines) * el.Seconds() / life.Seconds())
		}
		for ; sp.written < want; sp.written++ {
			if err := s.writeLine(sp.c); err != nil {
				return err
			}
		}
		if sp.written >= s.cfg.ShortPodLines && now.Sub(sp.start) >= life {
			sp.c.closeFiles()
			s.deletions = append(s.deletions, deletion{at: now.Add(s.cfg.PodDeleteDelay), dir: filepath.Dir(sp.c.dir), cs: []*container{sp.c}})
			continue
		}
		keep = append(keep, sp)
	}
	s.short = keep
	later := s.deletions[:0]
	for _, d := range s.deletions {
		if now.Before(d.at) {
			later = append(later, d)
			continue
		}
		if err := os.RemoveAll(d.dir); err != nil {
			return err
		}
		for _, c := range d.cs {
			c.rec.Deleted = true
		}
		s.ledger.PodsDeleted++
	}
	s.deletions = later
	return nil
}

var podApps = []string{"web", "cart", "checkout", "ledger", "search", "worker"}

func (s *Sim) uid() string {
	b := make([]byte, 16)
	for i := range b {
		b[i] = byte(s.rnd.UintN(256)) //nolint:gosec // UintN(256) is below 256
	}
	b[6] = 0x40 | b[6]&0x0f
	b[8] = 0x80 | b[8]&0x3f
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

func (s *Sim) suffix(n int) string {
	const alnum = "bcdfghjklmnpqrstvwxz2456789"
	b := make([]byte, n)
	for i := range b {
		b[i] = alnum[s.rnd.IntN(len(alnum))]
	}
	return string(b)
}

// startPod creates a pod's log directory and its containers' first files.
func (s *Sim) startPod(short bool) (*container, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ns := s.cfg.Namespaces[s.rnd.IntN(len(s.cfg.Namespaces))]
	app := podApps[s.rnd.IntN(len(podApps))]
	format := s.pickFormat()
	if cycle := []Format{FormatKlogText, FormatKlogJSON, FormatPlain}; !short && len(s.live) < len(cycle) && s.weight(cycle[len(s.live)]) > 0 {
		format = cycle[len(s.live)] // the first long-lived pods show every format
	}
	if strings.HasPrefix(ns, "kube-") {
		app = []string{"kube-scheduler", "kube-controller-manager", "kube-proxy"}[s.rnd.IntN(3)]
	}
	pod := fmt.Sprintf("%s-%s-%s", app, s.suffix(9), s.suffix(5))
	if short {
		pod = fmt.Sprintf("job-%s-%s", app, s.suffix(5))
	}
	uid := s.uid()
	return s.addPod(ns, pod, uid, app, format, short, nil)
}

// startNamed starts a long-lived pod with a given identity whose lines name itself.
func (s *Sim) startNamed(id PodIdentity) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	format := id.Format
	if format == "" {
		format = FormatKlogText
	}
	self := klog.KRef(id.Namespace, id.Name)
	_, err := s.addPod(id.Namespace, id.Name, id.UID, "app", format, false, &self)
	return err
}

// addPod creates a pod's log directory and its containers' first files; self, when set, is the
// pod its lines name. s.mu is held.
func (s *Sim) addPod(ns, pod, uid, app string, format Format, short bool, self *klog.ObjectRef) (*container, error) {
	var first *container
	n := s.cfg.ContainersPerPod
	if short {
		n = 1
	}
	for i := 0; i < n; i++ {
		name := app
		if i > 0 {
			name = fmt.Sprintf("%s-sidecar-%d", app, i)
		}
		s.nextID++
		c := &container{
			rec: ContainerRecord{
				ID: fmt.Sprintf("c%d", s.nextID), Namespace: ns, Pod: pod, UID: uid,
				Container: name, Format: format, ShortLived: short,
			},
			prod: newProducer(format, ns, s.node, s.cfg.Namespaces, s.rnd),
		}
		c.prod.self = self
		if self != nil {
			c.prod.selfUID = uid
		}
		c.dir = filepath.Join(s.PodsDir(), fmt.Sprintf("%s_%s_%s", ns, pod, uid), name)
		if err := os.MkdirAll(c.dir, 0o755); err != nil {
			return nil, err
		}
		if err := c.open(); err != nil {
			return nil, err
		}
		s.containers = append(s.containers, c)
		if !short {
			s.live = append(s.live, c)
		}
		if first == nil {
			first = c
		}
	}
	s.ledger.PodsCreated++
	return first, nil
}

func (s *Sim) weight(f Format) float64 {
	switch f {
	case FormatKlogText:
		return s.cfg.Mix.KlogText
	case FormatKlogJSON:
		return s.cfg.Mix.KlogJSON
	}
	return s.cfg.Mix.Plain
}

func (s *Sim) pickFormat() Format {
	m := s.cfg.Mix
	x := s.rnd.Float64() * (m.KlogText + m.KlogJSON + m.Plain)
	switch {
	case x < m.KlogText:
		return FormatKlogText
	case x < m.KlogText+m.KlogJSON:
		return FormatKlogJSON
	}
	return FormatPlain
}

func (c *container) open() error {
	c.path = filepath.Join(c.dir, fmt.Sprintf("%d.log", c.rec.Restart))
	f, err := os.OpenFile(c.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o640)
	if err != nil {
		return err
	}
	c.f, c.size = f, 0
	return nil
}

// writeLine writes the container's next line (and, between the pieces of a long stdout line,
// possibly a stderr line too).
func (s *Sim) writeLine(c *container) error {
	m := s.cfg.Mix
	x := s.rnd.Float64()
	c.rec.Lines++
	s.ledger.Lines++
	token := Token(c.rec.ID, c.rec.Lines)
	switch {
	case x < m.Long:
		c.rec.Long++
		stream, content := c.prod.long(token, s.cfg.LongLineBytes)
		return s.writeSplit(c, stream, content)
	case x < m.Long+m.Malformed:
		c.rec.Malformed++
		stream, content, raw := c.prod.malformed(token)
		if raw {
			c.rec.Unstamped = append(c.rec.Unstamped, c.rec.Lines)
			return s.write(c, append(content, '\n'))
		}
		return s.writeCRI(c, stream, "F", content)
	}
	stream, content := c.prod.normal(token)
	return s.writeCRI(c, stream, "F", content)
}

// writeSplit writes content in pieces of MaxLineBytes as containerd does; a stdout line may get a
// stderr line of the same container between two pieces, as the second pipe is copied meanwhile.
func (s *Sim) writeSplit(c *container, stream string, content []byte) error {
	max := s.cfg.MaxLineBytes
	interleaveAt := -1
	if stream == "stdout" && len(content) > max && s.rnd.IntN(2) == 0 {
		interleaveAt = max
	}
	for off := 0; off < len(content); off += max {
		end := min(off+max, len(content))
		tag := "P"
		if end == len(content) {
			tag = "F"
		}
		if err := s.writeCRI(c, stream, tag, content[off:end]); err != nil {
			return err
		}
		if end == interleaveAt {
			c.rec.Lines++
			s.ledger.Lines++
			_, errLine := c.prod.normal(Token(c.rec.ID, c.rec.Lines))
			if err := s.writeCRI(c, "stderr", "F", append([]byte("interleaved "), errLine...)); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *Sim) writeCRI(c *container, stream, tag string, content []byte) error {
	b := c.line[:0]
	b = time.Now().UTC().AppendFormat(b, time.RFC3339Nano)
	b = append(b, ' ')
	b = append(b, stream...)
	b = append(b, ' ')
	b = append(b, tag...)
	b = append(b, ' ')
	b = append(b, content...)
	b = append(b, '\n')
	c.line = b
	return s.write(c, b)
}

// write appends one complete line with one write call, as containerd does.
func (s *Sim) write(c *container, b []byte) error {
	if err := c.reopenIfDue(time.Now(), s.cfg.ReopenOverlap); err != nil {
		return err
	}
	n, err := c.f.Write(b)
	c.size += int64(n)
	c.rec.Bytes += int64(n)
	s.ledger.Bytes += int64(n)
	if err != nil {
		return fmt.Errorf("write %s: %w", c.path, err)
	}
	s.ledger.FileLines += int64(bytesCount(b, '\n'))
	return nil
}

func bytesCount(b []byte, c byte) int {
	n := 0
	for _, x := range b {
		if x == c {
			n++
		}
	}
	return n
}

// RotateNow checks every running container's file for rotation at once (kubelet does it every
// RotateCheck).
func (s *Sim) RotateNow() error { return s.rotateAll(time.Now()) }

func (s *Sim) rotateAll(now time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.live {
		if c.size < s.cfg.RotateBytes || !c.reopenAt.IsZero() || c.next != nil {
			continue // small, or the runtime has not reopened since the last rotation
		}
		if err := s.rotate(c, now); err != nil {
			return err
		}
	}
	return nil
}

// rotate does what kubelet's container log manager does for one file: remove rotated files
// beyond KeepFiles-2, compress every rotated file, rename the current file to
// <n>.log.<YYYYMMDD-hhmmss>; the runtime reopens ReopenDelay later (containerd creates a new
// <n>.log then, and writes to the renamed file until then).
func (s *Sim) rotate(c *container, now time.Time) error {
	rotatedName := c.path + "." + now.UTC().Format("20060102-150405")
	if _, err := os.Stat(rotatedName); err == nil {
		return nil // rotated this second already: kubelet's name would collide; try at the next check
	}
	rotated, err := filepath.Glob(c.path + ".*")
	if err != nil {
		return err
	}
	sort.Strings(rotated) // timestamps sort by time; ".gz" sorts after its plain name
	for len(rotated) > s.cfg.KeepFiles-2 && len(rotated) > 0 {
		if err := os.Remove(rotated[0]); err != nil {
			return err
		}
		s.ledger.Removed++
		rotated = rotated[1:]
	}
	for _, r := range rotated {
		if strings.HasSuffix(r, ".gz") {
			continue
		}
		if err := compress(r); err != nil {
			return err
		}
		s.ledger.Compressed++
	}
	if err := os.Rename(c.path, rotatedName); err != nil {
		return err
	}
	c.rec.Rotations++
	s.ledger.Rotations++
	c.reopenAt = now.Add(s.cfg.ReopenDelay)
	return nil
}

// reopenIfDue reopens the container's file once the runtime's reopen is due after a rotation.
// With an overlap it does it as containerd does: the new file is created first, and the
// renamed file keeps taking lines (its old writer drains what it had already read from the
// container) until overlap later.
func (c *container) reopenIfDue(now time.Time, overlap time.Duration) error {
	if c.next != nil && !now.Before(c.swapAt) {
		if err := c.f.Close(); err != nil {
			return err
		}
		c.f, c.next, c.swapAt, c.size = c.next, nil, time.Time{}, 0
	}
	if c.reopenAt.IsZero() || now.Before(c.reopenAt) || c.f == nil {
		return nil
	}
	c.reopenAt = time.Time{}
	if overlap > 0 {
		next, err := os.OpenFile(c.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o640)
		if err != nil {
			return err
		}
		c.next, c.swapAt = next, now.Add(overlap)
		return nil
	}
	if err := c.f.Close(); err != nil {
		return err
	}
	return c.open()
}

// closeFiles closes the container's files (the runtime stopped writing: the container ended).
func (c *container) closeFiles() {
	for _, f := range []*os.File{c.f, c.next} {
		if f != nil {
			_ = f.Close()
		}
	}
	c.f, c.next = nil, nil
}

// compress writes name.gz through a temporary file, as kubelet does, and removes name.
func compress(name string) error {
	in, err := os.Open(name)
	if err != nil {
		return err
	}
	defer func() { _ = in.Close() }() // read-only
	tmp := name + ".gz.tmp"
	out, err := os.Create(tmp)
	if err != nil {
		return err
	}
	zw := gzip.NewWriter(out)
	if _, err := io.Copy(zw, in); err != nil {
		_ = out.Close() // the copy error is the one to report
		return err
	}
	if err := zw.Close(); err != nil {
		_ = out.Close() // the compression error is the one to report
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, name+".gz"); err != nil {
		return err
	}
	return os.Remove(name)
}
