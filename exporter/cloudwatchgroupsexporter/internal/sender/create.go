// SPDX-License-Identifier: Apache-2.0

package sender

// Creation (design.md, section 7): groups and streams created on demand, once per process
// and, for a group, spread over a fleet.

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs/types"
	"github.com/aws/smithy-go"
	"go.uber.org/zap"
)

// createGroup creates a missing group on the send path. It asks for the settings CloudWatch
// only takes at creation (tags, KMS key, class) and, when the group cannot be created with
// them (a KMS key or tag problem, no logs:TagResource permission), creates it without them so
// no batch waits on a settings problem; the worker applies what is missing later. Retention is
// always left to the worker.
func (s *Sender) createGroup(ctx context.Context, group string) error {
	set := s.cfg.Settings
	create := func(in *cloudwatchlogs.CreateLogGroupInput, withSettings bool) error {
		return s.retry(ctx, "CreateLogGroup", func() error {
			if err := s.groupLimit.Wait(ctx); err != nil {
				return err
			}
			_, err := s.api.CreateLogGroup(ctx, in)
			var apiErr smithy.APIError
			if withSettings && errors.As(err, &apiErr) && apiErr.ErrorCode() == "AccessDeniedException" {
				// No permission for the KMS key or for tagging (logs:TagResource): not
				// worth waiting for with the settings; try without them.
				return &PermanentError{Err: err}
			}
			return err
		})
	}
	in := &cloudwatchlogs.CreateLogGroupInput{LogGroupName: aws.String(group)}
	if len(set.Tags) > 0 {
		in.Tags = set.Tags
	}
	if set.KMSKeyID != "" {
		in.KmsKeyId = aws.String(set.KMSKeyID)
	}
	if set.Class != "" {
		in.LogGroupClass = types.LogGroupClass(set.Class)
	}
	withSettings := in.Tags != nil || in.KmsKeyId != nil || in.LogGroupClass != ""
	err := create(in, withSettings)
	if err != nil && withSettings && classifyCtx(ctx, err) == classPermanent {
		s.obs.SettingsApplied(ctx, false)
		s.logger.Warn("Creating the log group with its settings failed; creating it without them",
			zap.String("log_group", group), zap.Error(err))
		err = create(&cloudwatchlogs.CreateLogGroupInput{LogGroupName: aws.String(group)}, false)
	}
	switch {
	case err == nil:
		s.obs.GroupCreated(ctx)
		if !set.empty() {
			s.enqueue(settingsJob{group: group, created: true})
		}
		return nil
	case classify(err) == classExists:
		return nil
	}
	return fmt.Errorf("create log group %q: %w", group, err)
}

// keyLock is the lock of one key and the number of callers holding or waiting for it.
type keyLock struct {
	mu   sync.Mutex
	refs int // under Sender.mu
}

// lockKey serializes work on one key (a stream, or a group) inside the process and returns
// the unlock. The key's lock is forgotten only when no caller holds or waits for it, so two
// callers never hold one key at once.
func (s *Sender) lockKey(key string) func() {
	s.mu.Lock()
	l := s.streamLocks[key]
	if l == nil {
		l = &keyLock{}
		s.streamLocks[key] = l
	}
	l.refs++
	s.mu.Unlock()
	l.mu.Lock()
	return func() {
		l.mu.Unlock()
		s.mu.Lock()
		if l.refs--; l.refs == 0 {
			delete(s.streamLocks, key)
		}
		s.mu.Unlock()
	}
}

// createdSince reports whether this process created (or found) key after since.
func (s *Sender) createdSince(key string, since time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	created, ok := s.created[key]
	return ok && created.After(since)
}

func (s *Sender) markCreated(key string) {
	s.mu.Lock()
	if len(s.created) >= createdLimit {
		clear(s.created)
	}
	s.created[key] = time.Now()
	s.mu.Unlock()
}

// createStream creates the stream unless another call created it after since. When the group
// is missing it is created too, but not at once (design.md, section 7): a new group is
// missing on every node of a fleet at the same moment, so a node first waits a random part of
// the backoff's initial interval and asks again (the CreateLogStream call is the describe: it
// has to be made anyway and its quota is ten times CreateLogGroup's); only a node that still
// finds the group missing creates it. A group created moments ago can still be missing for a
// while (eventual consistency): that is waited out with the backoff, and only every fourth
// answer asks to create it again.
func (s *Sender) createStream(ctx context.Context, group, stream string, since time.Time) error {
	key := group + "\x00" + stream
	unlock := s.lockKey(key)
	defer func() { unlock() }()
	// Parallel batches of a new stream all see ResourceNotFound; the first creates it, the
	// others find it created since their call failed and only retry their call.
	if s.createdSince(key, since) {
		return nil
	}

	create := func() error {
		return s.retry(ctx, "CreateLogStream", func() error {
			if err := s.streamLimit.Wait(ctx); err != nil {
				return err
			}
			_, err := s.api.CreateLogStream(ctx, &cloudwatchlogs.CreateLogStreamInput{
				LogGroupName: aws.String(group), LogStreamName: aws.String(stream),
			})
			return err
		})
	}
	var bo backoffState
	var err error
	for attempt := 0; ; attempt++ {
		asked := time.Now()
		err = create()
		if classify(err) != classNotFound {
			break
		}
		var werr error
		switch {
		case attempt == 0:
			// Not under the stream's lock: a send of the stream that comes meanwhile joins
			// the wait (and counts the sender it holds) instead of waiting for the lock.
			unlock()
			werr = s.lookAgain(ctx, group, asked)
			unlock = s.lockKey(key)
			if werr == nil && s.createdSince(key, since) {
				return nil
			}
		case attempt%recreateEvery == 1:
			werr = s.ensureGroup(ctx, group, asked)
		default:
			werr = s.wait(ctx, "CreateLogStream", &bo)
		}
		if werr != nil {
			return fmt.Errorf("create log stream %q in %q: %w (%w)", stream, group, werr, err)
		}
	}
	switch {
	case err == nil:
		s.obs.StreamCreated(ctx)
	case classify(err) == classExists:
	default:
		return fmt.Errorf("create log stream %q in %q: %w", stream, group, err)
	}
	s.markCreated(key)
	s.groupKnown(group)
	return nil
}

// Known tells the sender that groups exist, as an earlier process of this node learned
// (design.md, section 7): Ahead makes no call for them, and GroupKnown is not called for them.
func (s *Sender) Known(groups []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, g := range groups {
		if len(s.known) >= aheadLimit || len(s.ahead) >= aheadLimit {
			return
		}
		s.known[g] = true
		s.ahead[g] = true
	}
}

// groupKnown records that group exists and, the first time in the process, tells GroupKnown.
func (s *Sender) groupKnown(group string) {
	s.mu.Lock()
	if s.known[group] {
		s.mu.Unlock()
		return
	}
	if len(s.known) >= aheadLimit {
		clear(s.known)
	}
	s.known[group] = true
	s.mu.Unlock()
	if s.cfg.GroupKnown != nil {
		s.cfg.GroupKnown(group)
	}
}

// lookAgain is the wait before a node looks again at a group it found missing (asked: when
// the answer came). The wait is made once per group at a time in the process: a stream that
// finds the group missing while the wait of another of its streams runs ends with that wait,
// and one that finds it missing before this process's latest wait for the group ended, or
// before this process created or found the group, asks again at once. Only the fleet needs
// the spread; the streams of one process share it (without this, every stream of a new group
// waited on its own, each holding a sender, and a node start with a few new groups waited
// for tens of seconds). A wait never takes the last free sender of the exporter (design.md,
// section 7): a send (ctx from WithSend) that would leave no sender free ends every wait that
// holds one.
func (s *Sender) lookAgain(ctx context.Context, group string, asked time.Time) error {
	s.mu.Lock()
	if created, ok := s.created[group+"\x00"]; ok && created.After(asked) {
		s.mu.Unlock()
		return nil
	}
	l := s.looks[group]
	owner := false
	switch {
	case l != nil && !l.ended.IsZero() && l.ended.After(asked):
		s.mu.Unlock()
		return nil
	case l == nil || !l.ended.IsZero():
		if len(s.looks) >= createdLimit {
			for g, old := range s.looks {
				if !old.ended.IsZero() {
					delete(s.looks, g)
				}
			}
		}
		l = &groupLook{done: make(chan struct{}), cut: make(chan struct{})}
		s.looks[group] = l
		owner = true
	}
	release := s.holdSender(ctx, l)
	s.mu.Unlock()
	defer release()
	if !owner {
		select {
		case <-l.done:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		case <-s.stop:
			return errStopping
		}
	}
	err := s.sleepUnlessCut(ctx, s.spread(), l.cut)
	s.mu.Lock()
	l.ended = time.Now()
	s.mu.Unlock()
	close(l.done)
	return err
}

// holdSender counts, for a send (ctx from WithSend), the sender it holds while it waits on l,
// and when no sender would be left free ends every wait that holds one (design.md, section 7).
// It returns the release. Called under s.mu.
func (s *Sender) holdSender(ctx context.Context, l *groupLook) func() {
	slot, _ := ctx.Value(sendKey{}).(*sendSlot)
	if slot == nil || s.cfg.Senders <= 0 {
		return func() {}
	}
	s.held[slot]++
	l.senders++
	if len(s.held) >= s.cfg.Senders {
		for _, w := range s.looks {
			if w.ended.IsZero() && w.senders > 0 && !w.cutDone {
				w.cutDone = true
				close(w.cut)
				s.obs.GroupWaitCut(ctx)
			}
		}
	}
	return func() {
		s.mu.Lock()
		l.senders--
		if s.held[slot]--; s.held[slot] == 0 {
			delete(s.held, slot)
		}
		s.mu.Unlock()
	}
}

// sleepUnlessCut sleeps for d unless cut is closed first (then it returns nil at once).
func (s *Sender) sleepUnlessCut(ctx context.Context, d time.Duration, cut <-chan struct{}) error {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		select {
		case <-cut:
			cancel()
		case <-sctx.Done():
		}
	}()
	err := s.sleep(sctx, d)
	cancel()
	<-watched
	select {
	case <-cut:
		if ctx.Err() == nil {
			return nil
		}
	default:
	}
	return err
}

// sendKey marks a context as one push's sends (WithSend).
type sendKey struct{}

// sendSlot identifies one push: its batches hold one sender together.
type sendSlot struct{ _ byte }

// WithSend marks ctx as the sends of one push, which holds one of the exporter's senders
// (Config.Senders) for as long as it runs.
func WithSend(ctx context.Context) context.Context {
	return context.WithValue(ctx, sendKey{}, &sendSlot{})
}

// aheadLimit bounds the groups Ahead remembers (cleared when full, like created).
const aheadLimit = 10_000

// aheadBudget is how long Ahead's calls for one group are retried.
const aheadBudget = time.Minute

// Ahead makes sure, in the background and once per group in the process, that group exists
// and stream is created, as soon as the exporter first routes a record there (before the
// queue and the batcher's flush_timeout): a CreateLogStream call, and when the group is missing
// the wait before looking again and the group's creation (createStream). The send path then
// finds the stream in place, or waits for the creation in progress (the same locks and the
// shared wait), instead of making each new group's wait one after another while holding a
// sender. For a group and stream that exist it costs one CreateLogStream call (answered
// ResourceAlreadyExists), once per group and process unless the group was made Known.
func (s *Sender) Ahead(group, stream string) {
	s.mu.Lock()
	if s.stopped || s.ahead[group] {
		s.mu.Unlock()
		return
	}
	if len(s.ahead) >= aheadLimit {
		clear(s.ahead)
	}
	s.ahead[group] = true
	s.workerWG.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.workerWG.Done()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() {
			select {
			case <-s.stop:
				cancel()
			case <-ctx.Done():
			}
		}()
		if err := s.createStream(WithDeadline(ctx, time.Now().Add(aheadBudget)), group, stream, time.Now()); err != nil {
			// The send path creates what is still missing; forget the group so that a
			// later record tries ahead again.
			s.mu.Lock()
			delete(s.ahead, group)
			s.mu.Unlock()
		}
	}()
}

// groupLook is one wait before a missing group is looked at again (lookAgain).
type groupLook struct {
	done    chan struct{} // closed when the wait ends
	cut     chan struct{} // closed to end the wait early (no sender left free)
	ended   time.Time     // zero while it runs; under Sender.mu
	senders int           // sends waiting on it; under Sender.mu
	cutDone bool          // cut is closed; under Sender.mu
}

// spread is the random wait before a node creates a group it found missing: uniform over
// the backoff's initial interval.
func (s *Sender) spread() time.Duration {
	if s.cfg.Backoff.Disabled || s.cfg.Backoff.Initial <= 0 {
		return 0
	}
	return time.Duration(rand.Int64N(int64(s.cfg.Backoff.Initial))) //nolint:gosec // spreading a fleet's calls, not a secret
}

// ensureGroup creates the group once per process: callers for other streams of the group wait
// for the first and skip the call when it created (or found) the group after since.
func (s *Sender) ensureGroup(ctx context.Context, group string, since time.Time) error {
	key := group + "\x00"
	defer s.lockKey(key)()
	if s.createdSince(key, since) {
		return nil
	}
	if err := s.createGroup(ctx, group); err != nil {
		return err
	}
	s.markCreated(key)
	return nil
}

// createdLimit bounds the memory of recently created streams.
const createdLimit = 10_000

// recreateEvery is how many NotFound answers in a row, after the stream was created or found,
// are taken as eventual consistency (wait and try the call again) before asking to create it
// again (a group or stream deleted while writing).
const recreateEvery = 4
