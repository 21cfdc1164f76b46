// SPDX-License-Identifier: Apache-2.0

// Package sender writes batches to CloudWatch Logs: it creates groups and streams on demand,
// applies group settings to the groups it creates (and, when asked, to existing ones) without
// ever holding a send back, retries throttled and failed calls with backoff and jitter until a
// deadline or Stop, and reports events CloudWatch rejected.
package sender

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs/types"
	"go.uber.org/zap"
	"golang.org/x/time/rate"
)

// API is the part of the CloudWatch Logs client the sender uses.
type API interface {
	PutLogEvents(context.Context, *cloudwatchlogs.PutLogEventsInput, ...func(*cloudwatchlogs.Options)) (*cloudwatchlogs.PutLogEventsOutput, error)
	CreateLogGroup(context.Context, *cloudwatchlogs.CreateLogGroupInput, ...func(*cloudwatchlogs.Options)) (*cloudwatchlogs.CreateLogGroupOutput, error)
	CreateLogStream(context.Context, *cloudwatchlogs.CreateLogStreamInput, ...func(*cloudwatchlogs.Options)) (*cloudwatchlogs.CreateLogStreamOutput, error)
	DescribeLogGroups(context.Context, *cloudwatchlogs.DescribeLogGroupsInput, ...func(*cloudwatchlogs.Options)) (*cloudwatchlogs.DescribeLogGroupsOutput, error)
	PutRetentionPolicy(context.Context, *cloudwatchlogs.PutRetentionPolicyInput, ...func(*cloudwatchlogs.Options)) (*cloudwatchlogs.PutRetentionPolicyOutput, error)
	AssociateKmsKey(context.Context, *cloudwatchlogs.AssociateKmsKeyInput, ...func(*cloudwatchlogs.Options)) (*cloudwatchlogs.AssociateKmsKeyOutput, error)
	TagResource(context.Context, *cloudwatchlogs.TagResourceInput, ...func(*cloudwatchlogs.Options)) (*cloudwatchlogs.TagResourceOutput, error)
	ListTagsForResource(context.Context, *cloudwatchlogs.ListTagsForResourceInput, ...func(*cloudwatchlogs.Options)) (*cloudwatchlogs.ListTagsForResourceOutput, error)
}

// Observer receives the sender's events for telemetry. Implementations must be safe for
// concurrent use. Throttled and ServerError receive the error of the call that is retried.
type Observer interface {
	Throttled(ctx context.Context, op string, err error)
	ServerError(ctx context.Context, op string, err error)
	GroupCreated(ctx context.Context)
	StreamCreated(ctx context.Context)
	SettingsApplied(ctx context.Context, ok bool)
	ClassMismatch(ctx context.Context)
	// GroupWaitCut is called when a wait before looking again at a missing group ends early
	// because no sender was left free.
	GroupWaitCut(ctx context.Context)
}

// Config configures a Sender.
type Config struct {
	Settings GroupSettings
	// ApplyToExisting also brings groups this process did not create in line with Settings
	// (DescribeLogGroups, then only the calls for settings that differ), in the background.
	ApplyToExisting bool
	Backoff         Backoff
	// CreateGroupRate and CreateStreamRate bound CreateLogGroup and CreateLogStream calls per second.
	CreateGroupRate, CreateStreamRate float64
	// GroupKnown, when set, is called once per group and process when the sender first learns
	// that the group exists (a stream in it created or found, a batch written to it), unless
	// Known named the group. It must not block.
	GroupKnown func(group string)
	// Senders is how many pushes the exporter runs at once (the sending queue's
	// num_consumers); 0 when unbounded. A wait before looking again at a missing group never
	// holds the last of them (design.md, section 7).
	Senders int
}

// Sender writes batches. It is safe for concurrent use.
type Sender struct {
	api         API
	cfg         Config
	obs         Observer
	logger      *zap.Logger
	groupLimit  *rate.Limiter
	streamLimit *rate.Limiter
	mu          sync.Mutex
	groups      map[string]*groupState
	streamLocks map[string]*keyLock
	created     map[string]time.Time  // group+stream -> when this process created (or found) it
	looks       map[string]*groupLook // group -> this process's latest wait before looking at it again
	ahead       map[string]bool       // groups Ahead has seen
	known       map[string]bool       // groups this process knows exist (found, created, written to, or Known)
	held        map[*sendSlot]int     // pushes waiting before looking again at a group -> their waits
	stopped     bool                  // Stop was called: Ahead starts nothing
	sleep       func(context.Context, time.Duration) error

	stop     chan struct{}
	stopOnce sync.Once
	pending  chan settingsJob // groups whose settings the background worker applies
	workerWG sync.WaitGroup
}

// New returns a Sender.
func New(api API, cfg Config, obs Observer, logger *zap.Logger) *Sender {
	burst := func(r float64) int { return max(1, int(r)) }
	s := &Sender{
		api:         api,
		cfg:         cfg,
		obs:         obs,
		logger:      logger,
		groupLimit:  rate.NewLimiter(rate.Limit(cfg.CreateGroupRate), burst(cfg.CreateGroupRate)),
		streamLimit: rate.NewLimiter(rate.Limit(cfg.CreateStreamRate), burst(cfg.CreateStreamRate)),
		groups:      map[string]*groupState{},
		streamLocks: map[string]*keyLock{},
		created:     map[string]time.Time{},
		looks:       map[string]*groupLook{},
		ahead:       map[string]bool{},
		known:       map[string]bool{},
		held:        map[*sendSlot]int{},
		stop:        make(chan struct{}),
		pending:     make(chan settingsJob, settingsQueue),
	}
	s.sleep = s.sleepCtx
	if !cfg.Settings.empty() {
		s.workerWG.Add(1)
		go s.settingsWorker()
	}
	return s
}

// Stop ends every retry wait at once (calls in flight finish) and stops the settings worker.
// Sends after Stop fail with a retryable error.
func (s *Sender) Stop() {
	s.stopOnce.Do(func() {
		s.mu.Lock()
		s.stopped = true
		s.mu.Unlock()
		close(s.stop)
	})
	s.workerWG.Wait()
}

// Result describes one delivered batch.
type Result struct {
	// Rejected counts events CloudWatch refused, by reason: too_old, too_new, expired.
	Rejected map[string]int
}

// PermanentError marks a batch that must not be retried.
type PermanentError struct{ Err error }

func (e *PermanentError) Error() string { return e.Err.Error() }

func (e *PermanentError) Unwrap() error { return e.Err }

// Put writes one batch of events, which must already respect every PutLogEvents rule.
// It returns a *PermanentError when the batch must not be retried; any other error means the
// retries ran out (the request's deadline, its context, or Stop) and the batch may be retried.
func (s *Sender) Put(ctx context.Context, group, stream string, events []types.InputLogEvent) (Result, error) {
	in := &cloudwatchlogs.PutLogEventsInput{
		LogGroupName: aws.String(group), LogStreamName: aws.String(stream), LogEvents: events,
	}
	var res Result
	var bo backoffState
	for notFound := 0; ; notFound++ {
		var out *cloudwatchlogs.PutLogEventsOutput
		attempt := time.Now()
		err := s.retry(ctx, "PutLogEvents", func() error {
			var err error
			out, err = s.api.PutLogEvents(ctx, in)
			return err
		})
		if err == nil {
			res.Rejected = rejected(out.RejectedLogEventsInfo, len(events))
			s.groupKnown(group)
			return res, nil
		}
		switch classifyCtx(ctx, err) {
		case classNotFound:
			if notFound%recreateEvery != 0 {
				// Created (by us or another node) moments ago: CloudWatch is eventually
				// consistent, so wait before the next call.
				if werr := s.wait(ctx, "PutLogEvents", &bo); werr != nil {
					return res, fmt.Errorf("log stream %q in %q still missing: %w (%w)", stream, group, werr, err)
				}
				continue
			}
			if cerr := s.createStream(ctx, group, stream, attempt); cerr != nil {
				if classifyCtx(ctx, cerr) == classPermanent {
					return res, &PermanentError{Err: cerr}
				}
				return res, cerr
			}
			continue
		case classPermanent, classExists:
			return res, &PermanentError{Err: err}
		}
		return res, err
	}
}

// rejected turns rejectedLogEventsInfo into counts by reason. Each of the n events is counted
// at most once: the leading too-old or expired range first, then the trailing too-new range
// from where the leading one ends.
func rejected(info *types.RejectedLogEventsInfo, n int) map[string]int {
	if info == nil {
		return nil
	}
	clamp := func(v int32) int { return min(max(int(v), 0), n) }
	out := map[string]int{}
	tooOld, expired := 0, 0
	if info.TooOldLogEventEndIndex != nil {
		tooOld = clamp(*info.TooOldLogEventEndIndex)
	}
	if info.ExpiredLogEventEndIndex != nil {
		expired = clamp(*info.ExpiredLogEventEndIndex)
	}
	// The two leading ranges overlap; count each event once, as the wider reason's.
	lead := max(tooOld, expired)
	if expired > tooOld {
		out["expired"] = expired
	} else if tooOld > 0 {
		out["too_old"] = tooOld
	}
	if info.TooNewLogEventStartIndex != nil {
		if start := max(clamp(*info.TooNewLogEventStartIndex), lead); start < n {
			out["too_new"] = n - start
		}
	}
	return out
}
