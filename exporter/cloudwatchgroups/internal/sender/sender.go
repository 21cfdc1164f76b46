// SPDX-License-Identifier: Apache-2.0

// Package sender writes batches to CloudWatch Logs: it creates groups and streams on demand,
// applies group settings to the groups it creates (and, when asked, to existing ones) without
// ever holding a send back, retries throttled and failed calls with backoff and jitter until a
// deadline or Stop, and reports events CloudWatch rejected.
package sender

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs/types"
	"github.com/aws/smithy-go"
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

// GroupSettings are applied to every group the sender writes to.
type GroupSettings struct {
	RetentionDays int32
	Tags          map[string]string
	KMSKeyID      string
	Class         string
}

func (g GroupSettings) empty() bool {
	return g.RetentionDays == 0 && len(g.Tags) == 0 && g.KMSKeyID == "" && g.Class == ""
}

// Backoff controls retries of one call.
type Backoff struct {
	Initial, Max time.Duration
	// Multiplier grows the wait after each failure (values below 1 mean 2).
	Multiplier float64
	// Randomization spreads each wait over wait*(1±Randomization) (0 to 1).
	Randomization float64
	// Disabled turns retries off: every failure is returned at once.
	Disabled bool
}

type deadlineKey struct{}

// WithDeadline returns ctx carrying the time after which calls are no longer retried (the
// request's max_elapsed_time budget). Unlike a context deadline it never cuts a call short.
func WithDeadline(ctx context.Context, t time.Time) context.Context {
	return context.WithValue(ctx, deadlineKey{}, t)
}

func retryDeadline(ctx context.Context) time.Time {
	t, _ := ctx.Value(deadlineKey{}).(time.Time)
	return t
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
	streamLocks map[string]*sync.Mutex
	created     map[string]time.Time // group+stream -> when this process created (or found) it
	sleep       func(context.Context, time.Duration) error

	stop     chan struct{}
	stopOnce sync.Once
	pending  chan settingsJob // groups whose settings the background worker applies
	workerWG sync.WaitGroup
}

type groupState struct {
	queued bool // a settings job for the group is queued or done in this process
}

// settingsJob asks the background worker to apply settings to one group.
type settingsJob struct {
	group string
	// created is set for a group this process created without (some of) its settings.
	created bool
}

// settingsBudget bounds the retries of one attempt to apply a group's settings.
const settingsBudget = 5 * time.Second

// maxUnlisted is how many times the worker waits (with the backoff) for a group it created to
// be listed by DescribeLogGroups before it counts the attempt as failed.
const maxUnlisted = 8

// settingsRetryDelay is the pause after a failed attempt to apply group settings.
const settingsRetryDelay = time.Minute

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
		streamLocks: map[string]*sync.Mutex{},
		created:     map[string]time.Time{},
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

// settingsQueue bounds the groups waiting for their settings; more are tried again later.
const settingsQueue = 1024

// Stop ends every retry wait at once (calls in flight finish) and stops the settings worker.
// Sends after Stop fail with a retryable error.
func (s *Sender) Stop() {
	s.stopOnce.Do(func() { close(s.stop) })
	s.workerWG.Wait()
}

func (s *Sender) sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-s.stop:
		return errStopping
	case <-t.C:
		return nil
	}
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

func (s *Sender) group(name string) *groupState {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, ok := s.groups[name]
	if !ok {
		if len(s.groups) >= createdLimit {
			clear(s.groups)
		}
		g = &groupState{queued: s.cfg.Settings.empty()}
		s.groups[name] = g
	}
	return g
}

// Prepare asks, once per process and group, for the settings to be applied to an existing
// group when ApplyToExisting is set. It never waits: the background worker does the calls.
func (s *Sender) Prepare(group string) {
	if !s.cfg.ApplyToExisting {
		return
	}
	s.enqueue(settingsJob{group: group})
}

func (s *Sender) enqueue(job settingsJob) {
	g := s.group(job.group)
	s.mu.Lock()
	if g.queued && !job.created {
		s.mu.Unlock()
		return
	}
	g.queued = true
	s.mu.Unlock()
	select {
	case s.pending <- job:
	default:
		// Queue full: forget the group, so a later send asks again.
		s.mu.Lock()
		g.queued = false
		s.mu.Unlock()
	}
}

// settingsWorker applies settings one group at a time, so settings calls never run in
// parallel with themselves and never hold a send back. A failure is logged, counted and tried
// again settingsRetryDelay later.
func (s *Sender) settingsWorker() {
	defer s.workerWG.Done()
	ctx := context.Background()
	for {
		var job settingsJob
		select {
		case <-s.stop:
			return
		case job = <-s.pending:
		}
		var bo backoffState
		for unlisted := 0; ; {
			err := s.reconcile(WithDeadline(ctx, time.Now().Add(settingsBudget)), job.group)
			if errors.Is(err, errNotListed) && !job.created {
				// Not created yet: whoever creates it applies the settings.
				break
			}
			if errors.Is(err, errNotListed) && unlisted < maxUnlisted {
				// Created moments ago: the listing is eventually consistent.
				unlisted++
				if s.sleep(ctx, bo.next(s.cfg.Backoff)) != nil {
					return
				}
				continue
			}
			s.obs.SettingsApplied(ctx, err == nil)
			if err == nil || errors.Is(err, errStopping) {
				break
			}
			s.logger.Warn("Applying log group settings failed; will try again", zap.String("log_group", job.group),
				zap.Duration("after", settingsRetryDelay), zap.Error(err))
			if s.sleep(ctx, settingsRetryDelay) != nil {
				return
			}
		}
	}
}

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

func (s *Sender) putRetention(ctx context.Context, group string) error {
	return s.retry(ctx, "PutRetentionPolicy", func() error {
		_, err := s.api.PutRetentionPolicy(ctx, &cloudwatchlogs.PutRetentionPolicyInput{
			LogGroupName: aws.String(group), RetentionInDays: aws.Int32(s.cfg.Settings.RetentionDays),
		})
		return err
	})
}

// reconcile brings a group's settings in line: one DescribeLogGroups, then a call only for
// each setting that differs. Tags are compared through ListTagsForResource.
func (s *Sender) reconcile(ctx context.Context, group string) error {
	set := s.cfg.Settings
	var found *types.LogGroup
	err := s.retry(ctx, "DescribeLogGroups", func() error {
		var next *string
		for {
			out, err := s.api.DescribeLogGroups(ctx, &cloudwatchlogs.DescribeLogGroupsInput{
				LogGroupNamePrefix: aws.String(group), NextToken: next,
			})
			if err != nil {
				return err
			}
			for i := range out.LogGroups {
				if aws.ToString(out.LogGroups[i].LogGroupName) == group {
					found = &out.LogGroups[i]
					return nil
				}
			}
			if out.NextToken == nil || aws.ToString(out.NextToken) == aws.ToString(next) {
				return nil
			}
			next = out.NextToken
		}
	})
	if err != nil {
		return fmt.Errorf("describe log group %q: %w", group, err)
	}
	if found == nil {
		return fmt.Errorf("log group %q: %w", group, errNotListed)
	}
	if set.Class != "" && found.LogGroupClass != "" && string(found.LogGroupClass) != set.Class {
		s.obs.ClassMismatch(ctx)
		s.logger.Warn("Existing log group has another class; the class of a group cannot be changed",
			zap.String("log_group", group), zap.String("class", string(found.LogGroupClass)), zap.String("configured", set.Class))
	}
	var errs []error
	if set.RetentionDays > 0 && aws.ToInt32(found.RetentionInDays) != set.RetentionDays {
		if err := s.putRetention(ctx, group); err != nil {
			errs = append(errs, fmt.Errorf("put retention policy: %w", err))
		}
	}
	if set.KMSKeyID != "" && aws.ToString(found.KmsKeyId) != set.KMSKeyID {
		err := s.retry(ctx, "AssociateKmsKey", func() error {
			_, err := s.api.AssociateKmsKey(ctx, &cloudwatchlogs.AssociateKmsKeyInput{
				LogGroupName: aws.String(group), KmsKeyId: aws.String(set.KMSKeyID),
			})
			return err
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("associate kms key: %w", err))
		}
	}
	if len(set.Tags) > 0 {
		arn := aws.ToString(found.LogGroupArn)
		if arn == "" {
			arn = strings.TrimSuffix(aws.ToString(found.Arn), ":*")
		}
		var have map[string]string
		err := s.retry(ctx, "ListTagsForResource", func() error {
			out, err := s.api.ListTagsForResource(ctx, &cloudwatchlogs.ListTagsForResourceInput{ResourceArn: aws.String(arn)})
			if err == nil {
				have = out.Tags
			}
			return err
		})
		if err == nil && tagsContain(have, set.Tags) {
			return errors.Join(errs...)
		}
		err = s.retry(ctx, "TagResource", func() error {
			_, err := s.api.TagResource(ctx, &cloudwatchlogs.TagResourceInput{ResourceArn: aws.String(arn), Tags: set.Tags})
			return err
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("tag resource: %w", err))
		}
	}
	return errors.Join(errs...)
}

// errNotListed says DescribeLogGroups does not list a group (not created, or created moments
// ago: the listing is eventually consistent).
var errNotListed = errors.New("not listed by DescribeLogGroups")

// tagsContain reports whether have holds every tag of want with the same value.
func tagsContain(have, want map[string]string) bool {
	for k, v := range want {
		if hv, ok := have[k]; !ok || hv != v {
			return false
		}
	}
	return true
}

// lockKey serializes work on one key (a stream, or a group) inside the process and returns
// the unlock.
func (s *Sender) lockKey(key string) func() {
	s.mu.Lock()
	l, ok := s.streamLocks[key]
	if !ok {
		l = &sync.Mutex{}
		s.streamLocks[key] = l
	}
	s.mu.Unlock()
	l.Lock()
	return func() {
		l.Unlock()
		s.mu.Lock()
		delete(s.streamLocks, key)
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
	defer s.lockKey(key)()
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
			werr = s.sleep(ctx, s.spread())
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
	return nil
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

// backoffState is the growing wait of one retry loop.
type backoffState struct{ wait time.Duration }

// next returns the next wait: Initial, then times Multiplier up to Max, each spread by
// Randomization.
func (b *backoffState) next(cfg Backoff) time.Duration {
	mult := cfg.Multiplier
	if mult < 1 {
		mult = 2
	}
	if b.wait == 0 {
		b.wait = max(cfg.Initial, time.Millisecond)
	} else {
		b.wait = min(time.Duration(float64(b.wait)*mult), max(cfg.Max, b.wait))
	}
	r := min(max(cfg.Randomization, 0), 1)
	delta := r * float64(b.wait)
	return time.Duration(float64(b.wait) - delta + rand.Float64()*2*delta) //nolint:gosec // retry jitter, not a secret
}

// wait sleeps for the next backoff unless that would pass the request's deadline; it returns
// an error when the retries must end (deadline, context, Stop).
func (s *Sender) wait(ctx context.Context, op string, b *backoffState) error {
	if s.cfg.Backoff.Disabled {
		return errors.New("retries disabled")
	}
	d := b.next(s.cfg.Backoff)
	if dl := retryDeadline(ctx); !dl.IsZero() && time.Now().Add(d).After(dl) {
		return fmt.Errorf("%s: %w", op, ErrRetriesExhausted)
	}
	return s.sleep(ctx, d)
}

// ErrRetriesExhausted says a call still failed when the request's retry budget ran out.
var ErrRetriesExhausted = errors.New("retries exhausted")

// retry calls fn until it succeeds, fails for a reason that retrying does not fix, or the
// request's deadline, ctx or Stop ends the retries. Waits grow by the backoff's multiplier,
// spread by its randomization.
func (s *Sender) retry(ctx context.Context, op string, fn func() error) error {
	var b backoffState
	for {
		// After Stop every call is still tried once (a memory queue drains at shutdown);
		// only the waits between tries end.
		err := fn()
		if err == nil {
			return nil
		}
		switch classifyCtx(ctx, err) {
		case classThrottle:
			s.obs.Throttled(ctx, op, err)
		case classTransient:
			s.obs.ServerError(ctx, op, err)
		default:
			return err
		}
		if werr := s.wait(ctx, op, &b); werr != nil {
			return fmt.Errorf("%w (last error: %w)", werr, err)
		}
	}
}
