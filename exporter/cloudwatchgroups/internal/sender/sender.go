// Package sender writes batches to CloudWatch Logs: it creates groups and streams on demand,
// applies group settings once per process, retries throttled and failed calls with backoff and
// jitter, and reports events CloudWatch rejected.
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
	// MaxElapsed bounds the retries of one batch; 0 means until the context ends.
	MaxElapsed time.Duration
	// Disabled turns retries off: every failure is returned at once.
	Disabled bool
}

// Observer receives the sender's events for telemetry. Implementations must be safe for
// concurrent use.
type Observer interface {
	Throttled(ctx context.Context, op string)
	ServerError(ctx context.Context, op string)
	GroupCreated(ctx context.Context)
	StreamCreated(ctx context.Context)
	SettingsApplied(ctx context.Context, ok bool)
	ClassMismatch(ctx context.Context)
}

// Config configures a Sender.
type Config struct {
	Settings GroupSettings
	Backoff  Backoff
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
}

type groupState struct {
	mu      sync.Mutex
	applied bool // settings applied (or nothing to apply) in this process
	// nextTry is when a failed attempt may be repeated, so a failing group does not slow
	// every batch down.
	nextTry time.Time
}

// settingsRetryDelay is the pause after a failed attempt to apply group settings.
const settingsRetryDelay = time.Minute

// New returns a Sender.
func New(api API, cfg Config, obs Observer, logger *zap.Logger) *Sender {
	burst := func(r float64) int { return max(1, int(r)) }
	return &Sender{
		api:         api,
		cfg:         cfg,
		obs:         obs,
		logger:      logger,
		groupLimit:  rate.NewLimiter(rate.Limit(cfg.CreateGroupRate), burst(cfg.CreateGroupRate)),
		streamLimit: rate.NewLimiter(rate.Limit(cfg.CreateStreamRate), burst(cfg.CreateStreamRate)),
		groups:      map[string]*groupState{},
		streamLocks: map[string]*sync.Mutex{},
		created:     map[string]time.Time{},
		sleep:       sleepCtx,
	}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
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
		g = &groupState{applied: s.cfg.Settings.empty()}
		s.groups[name] = g
	}
	return g
}

// Prepare applies the group settings to group once per process, creating the group when it
// is missing. A failure is logged and counted; it is tried again after settingsRetryDelay.
func (s *Sender) Prepare(ctx context.Context, group string) {
	g := s.group(group)
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.applied || time.Now().Before(g.nextTry) {
		return
	}
	err := s.ensureGroup(ctx, group)
	s.obs.SettingsApplied(ctx, err == nil)
	if err != nil {
		g.nextTry = time.Now().Add(settingsRetryDelay)
		s.logger.Warn("Applying log group settings failed; will try again", zap.String("log_group", group),
			zap.Duration("after", settingsRetryDelay), zap.Error(err))
		return
	}
	g.applied = true
}

// ensureGroup creates group with the settings or, when it exists, brings its settings in line.
func (s *Sender) ensureGroup(ctx context.Context, group string) error {
	set := s.cfg.Settings
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
	err := s.retry(ctx, "CreateLogGroup", func() error {
		if err := s.groupLimit.Wait(ctx); err != nil {
			return err
		}
		_, err := s.api.CreateLogGroup(ctx, in)
		return err
	})
	switch {
	case err == nil:
		s.obs.GroupCreated(ctx)
		if set.RetentionDays > 0 {
			return s.putRetention(ctx, group)
		}
		return nil
	case classify(err) != classExists:
		return fmt.Errorf("create log group %q: %w", group, err)
	}
	if set.empty() {
		return nil
	}
	return s.reconcile(ctx, group)
}

func (s *Sender) putRetention(ctx context.Context, group string) error {
	return s.retry(ctx, "PutRetentionPolicy", func() error {
		_, err := s.api.PutRetentionPolicy(ctx, &cloudwatchlogs.PutRetentionPolicyInput{
			LogGroupName: aws.String(group), RetentionInDays: aws.Int32(s.cfg.Settings.RetentionDays),
		})
		return err
	})
}

// reconcile applies the settings to an existing group.
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
		return fmt.Errorf("log group %q exists but is not listed", group)
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
		err := s.retry(ctx, "TagResource", func() error {
			_, err := s.api.TagResource(ctx, &cloudwatchlogs.TagResourceInput{ResourceArn: aws.String(arn), Tags: set.Tags})
			return err
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("tag resource: %w", err))
		}
	}
	if set.Class != "" && found.LogGroupClass != "" && string(found.LogGroupClass) != set.Class {
		s.obs.ClassMismatch(ctx)
		s.logger.Warn("Existing log group has another class; the class of a group cannot be changed",
			zap.String("log_group", group), zap.String("class", string(found.LogGroupClass)), zap.String("configured", set.Class))
	}
	return errors.Join(errs...)
}

// The group is created first when it is missing.
// createStream creates the stream unless another call created it after since.
func (s *Sender) createStream(ctx context.Context, group, stream string, since time.Time) error {
	key := group + "\x00" + stream
	s.mu.Lock()
	l, ok := s.streamLocks[key]
	if !ok {
		l = &sync.Mutex{}
		s.streamLocks[key] = l
	}
	s.mu.Unlock()
	l.Lock()
	defer func() {
		l.Unlock()
		s.mu.Lock()
		delete(s.streamLocks, key)
		s.mu.Unlock()
	}()
	// Parallel batches of a new stream all see ResourceNotFound; the first creates it, the
	// others find it created since their call failed and only retry their call.
	s.mu.Lock()
	created, ok := s.created[key]
	s.mu.Unlock()
	if ok && created.After(since) {
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
	err := create()
	if classify(err) == classNotFound {
		g := s.group(group)
		g.mu.Lock()
		gerr := s.ensureGroup(ctx, group)
		if gerr == nil {
			g.applied = true
		}
		g.mu.Unlock()
		if gerr != nil {
			return gerr
		}
		err = create()
	}
	switch {
	case err == nil:
		s.obs.StreamCreated(ctx)
	case classify(err) == classExists:
	default:
		return fmt.Errorf("create log stream %q in %q: %w", stream, group, err)
	}
	s.mu.Lock()
	if len(s.created) >= createdLimit {
		clear(s.created)
	}
	s.created[key] = time.Now()
	s.mu.Unlock()
	return nil
}

// createdLimit bounds the memory of recently created streams.
const createdLimit = 10_000

// maxNotFound bounds create-and-retry rounds for one batch (a group deleted while writing).
const maxNotFound = 3

// Put writes one batch of events, which must already respect every PutLogEvents rule.
// It returns a *PermanentError when the batch must not be retried.
func (s *Sender) Put(ctx context.Context, group, stream string, events []types.InputLogEvent) (Result, error) {
	in := &cloudwatchlogs.PutLogEventsInput{
		LogGroupName: aws.String(group), LogStreamName: aws.String(stream), LogEvents: events,
	}
	var res Result
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
		switch classify(err) {
		case classNotFound:
			if notFound >= maxNotFound {
				return res, fmt.Errorf("log stream %q in %q still missing after creating it: %w", stream, group, err)
			}
			if cerr := s.createStream(ctx, group, stream, attempt); cerr != nil {
				if classify(cerr) == classPermanent {
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

// rejected turns rejectedLogEventsInfo into counts by reason.
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
	if expired > tooOld {
		out["expired"] = expired
	} else if tooOld > 0 {
		out["too_old"] = tooOld
	}
	if info.TooNewLogEventStartIndex != nil {
		if start := clamp(*info.TooNewLogEventStartIndex); start < n {
			out["too_new"] = n - start
		}
	}
	return out
}

// retry calls fn until it succeeds, fails for a reason other than throttling or a transient
// failure, or the backoff budget or ctx runs out. Waits grow exponentially with jitter.
func (s *Sender) retry(ctx context.Context, op string, fn func() error) error {
	b := s.cfg.Backoff
	var deadline time.Time
	if b.MaxElapsed > 0 {
		deadline = time.Now().Add(b.MaxElapsed)
	}
	wait := max(b.Initial, time.Millisecond)
	for {
		err := fn()
		if err == nil {
			return nil
		}
		switch classify(err) {
		case classThrottle:
			s.obs.Throttled(ctx, op)
		case classTransient:
			s.obs.ServerError(ctx, op)
		default:
			return err
		}
		if b.Disabled {
			return err
		}
		// Equal jitter: half the wait fixed, half random, so parallel callers spread out.
		d := wait/2 + rand.N(wait/2+1) //nolint:gosec // retry jitter, not a secret
		if !deadline.IsZero() && time.Now().Add(d).After(deadline) {
			return fmt.Errorf("%s: retries exhausted: %w", op, err)
		}
		if serr := s.sleep(ctx, d); serr != nil {
			return fmt.Errorf("%s: %w (last error: %w)", op, serr, err)
		}
		wait = min(wait*2, max(b.Max, wait))
	}
}
