// SPDX-License-Identifier: Apache-2.0

package sender

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs/types"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
)

// groupsAPI keeps groups and streams as CloudWatch does (without its eventual consistency):
// PutLogEvents to a missing stream and CreateLogStream in a missing group answer NotFound.
type groupsAPI struct {
	API
	mu          sync.Mutex
	streams     map[string]map[string]bool // group -> streams
	streamAsks  int                        // CreateLogStream calls
	groupCreate int                        // CreateLogGroup calls
	stored      int                        // events stored
}

func (a *groupsAPI) PutLogEvents(_ context.Context, in *cloudwatchlogs.PutLogEventsInput, _ ...func(*cloudwatchlogs.Options)) (*cloudwatchlogs.PutLogEventsOutput, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.streams[*in.LogGroupName][*in.LogStreamName] {
		return nil, apiErr("ResourceNotFoundException")
	}
	a.stored += len(in.LogEvents)
	return &cloudwatchlogs.PutLogEventsOutput{}, nil
}

func (a *groupsAPI) CreateLogStream(_ context.Context, in *cloudwatchlogs.CreateLogStreamInput, _ ...func(*cloudwatchlogs.Options)) (*cloudwatchlogs.CreateLogStreamOutput, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.streamAsks++
	g, ok := a.streams[*in.LogGroupName]
	if !ok {
		return nil, apiErr("ResourceNotFoundException")
	}
	g[*in.LogStreamName] = true
	return &cloudwatchlogs.CreateLogStreamOutput{}, nil
}

func (a *groupsAPI) CreateLogGroup(_ context.Context, in *cloudwatchlogs.CreateLogGroupInput, _ ...func(*cloudwatchlogs.Options)) (*cloudwatchlogs.CreateLogGroupOutput, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.groupCreate++
	if _, ok := a.streams[*in.LogGroupName]; ok {
		return nil, apiErr("ResourceAlreadyExistsException")
	}
	a.streams[*in.LogGroupName] = map[string]bool{}
	return &cloudwatchlogs.CreateLogGroupOutput{}, nil
}

func (a *groupsAPI) counts() (asks, creates, stored int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.streamAsks, a.groupCreate, a.stored
}

// TestStreamsOfAMissingGroupShareOneWait: the streams of a new group that find it missing
// while one of them waits before looking again all end with that one wait (one spread per
// group and process, design.md section 7); the group is created once and every batch is
// stored. A stream of the group that comes after the group was created waits for nothing.
func TestStreamsOfAMissingGroupShareOneWait(t *testing.T) {
	api := &groupsAPI{streams: map[string]map[string]bool{}}
	s := New(api, Config{Backoff: Backoff{Initial: time.Hour, Max: time.Hour}, CreateGroupRate: 1000, CreateStreamRate: 1000}, &countingObserver{}, zap.NewNop())
	defer s.Stop()
	var mu sync.Mutex
	waits := 0
	entered, release := make(chan struct{}, 16), make(chan struct{})
	s.sleep = func(ctx context.Context, _ time.Duration) error {
		mu.Lock()
		waits++
		mu.Unlock()
		entered <- struct{}{}
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	const streams = 8
	put := func(stream string) error {
		ctx := WithDeadline(context.Background(), time.Now().Add(time.Minute))
		_, err := s.Put(ctx, "g", stream, []types.InputLogEvent{{Message: aws.String("m"), Timestamp: aws.Int64(1)}})
		return err
	}
	errs := make(chan error, streams)
	for i := range streams {
		go func() { errs <- put(string(rune('a' + i))) }()
	}
	<-entered
	// Every stream has found the group missing; all but the first now wait for its wait.
	require.Eventually(t, func() bool { asks, _, _ := api.counts(); return asks >= streams }, 10*time.Second, time.Millisecond)
	close(release)
	for range streams {
		require.NoError(t, <-errs)
	}
	asks, creates, stored := api.counts()
	mu.Lock()
	require.Equal(t, 1, waits, "one wait before looking at the group again, for all its streams")
	mu.Unlock()
	require.Equal(t, 1, creates, "CreateLogGroup calls")
	require.Equal(t, streams, stored)

	require.NoError(t, put("late"))
	mu.Lock()
	require.Equal(t, 1, waits, "a stream of a group that exists waits for nothing")
	mu.Unlock()
	asksAfter, _, _ := api.counts()
	require.Equal(t, asks+1, asksAfter, "the late stream is created with one call")
}

// TestAheadCreatesNewGroupsInParallel: the groups and streams the exporter routes records to
// are created in the background as soon as it sees them, the waits before looking again at
// missing groups side by side (not one after another in the senders); a Put afterwards is
// delivered at its first call. Stop ends waits still running.
func TestAheadCreatesNewGroupsInParallel(t *testing.T) {
	api := &groupsAPI{streams: map[string]map[string]bool{}}
	s := New(api, Config{Backoff: Backoff{Initial: time.Hour, Max: time.Hour}, CreateGroupRate: 1000, CreateStreamRate: 1000}, &countingObserver{}, zap.NewNop())
	groups := []string{"g1", "g2", "g3"}
	entered, release := make(chan struct{}, 16), make(chan struct{})
	var mu sync.Mutex
	waits := 0
	s.sleep = func(ctx context.Context, _ time.Duration) error {
		mu.Lock()
		waits++
		released := waits <= len(groups) // later waits only end with Stop
		mu.Unlock()
		entered <- struct{}{}
		if !released {
			<-ctx.Done()
			return ctx.Err()
		}
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	for _, g := range groups {
		s.Ahead(g, "s")
		s.Ahead(g, "other") // once per group
	}
	for range groups {
		<-entered // all three waits run at once
	}
	close(release)
	require.Eventually(t, func() bool { _, creates, _ := api.counts(); return creates == len(groups) }, 10*time.Second, time.Millisecond)
	require.Eventually(t, func() bool {
		api.mu.Lock()
		defer api.mu.Unlock()
		for _, g := range groups {
			if !api.streams[g]["s"] {
				return false
			}
		}
		return true
	}, 10*time.Second, time.Millisecond)
	for _, g := range groups {
		ctx := WithDeadline(context.Background(), time.Now().Add(time.Minute))
		_, err := s.Put(ctx, g, "s", []types.InputLogEvent{{Message: aws.String("m"), Timestamp: aws.Int64(1)}})
		require.NoError(t, err)
	}
	asks, creates, stored := api.counts()
	require.Equal(t, len(groups), creates)
	require.Equal(t, len(groups), stored)
	// Per group: the first CreateLogStream, the look after the wait, the one after creating
	// the group; none on the send path.
	require.Equal(t, 3*len(groups), asks, "CreateLogStream calls")

	// A wait still running when the sender stops ends at once.
	s.Ahead("g4", "s")
	<-entered
	stopped := make(chan struct{})
	go func() { s.Stop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(10 * time.Second):
		t.Fatal("Stop did not end Ahead's wait")
	}
	s.Ahead("g5", "s") // after Stop: nothing starts
	_, creates, _ = api.counts()
	require.Equal(t, len(groups), creates)
}

// TestKnownGroupsAreNotLookedAt: groups an earlier process learned exist (Known) get no
// CreateLogStream ahead and are not reported again; any other group is reported once, when the
// sender first finds it exists (design.md, section 7).
func TestKnownGroupsAreNotLookedAt(t *testing.T) {
	api := &groupsAPI{streams: map[string]map[string]bool{"g1": {"s": true}, "g2": {"s": true}}}
	var mu sync.Mutex
	var told []string
	cfg := Config{Backoff: Backoff{Initial: time.Hour, Max: time.Hour}, CreateGroupRate: 1000, CreateStreamRate: 1000}
	cfg.GroupKnown = func(g string) { mu.Lock(); told = append(told, g); mu.Unlock() }
	s := New(api, cfg, &countingObserver{}, zap.NewNop())
	s.Known([]string{"g1"})
	s.Ahead("g1", "s")
	s.Ahead("g2", "s")
	require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(told) == 1 }, 10*time.Second, time.Millisecond)
	for _, g := range []string{"g1", "g2", "g1", "g2"} {
		_, err := s.Put(WithDeadline(context.Background(), time.Now().Add(time.Minute)), g, "s", []types.InputLogEvent{{Message: aws.String("m"), Timestamp: aws.Int64(1)}})
		require.NoError(t, err)
	}
	s.Stop()
	asks, _, stored := api.counts()
	require.Equal(t, 1, asks, "CreateLogStream calls: only the unknown group's, ahead")
	require.Equal(t, 4, stored)
	require.Equal(t, []string{"g2"}, told)
}

// cutObserver counts the waits ended early.
type cutObserver struct {
	countingObserver
	mu   sync.Mutex
	cuts int
}

func (o *cutObserver) GroupWaitCut(context.Context) { o.mu.Lock(); o.cuts++; o.mu.Unlock() }

func (o *cutObserver) count() int { o.mu.Lock(); defer o.mu.Unlock(); return o.cuts }

// TestWaitNeverTakesTheLastSender (design.md, section 7): with two senders, a push waiting
// before looking again at a missing group keeps its wait while the other sender is free (and
// a second batch of the same push, or a wait held by nobody, changes nothing); when the second
// push would wait too, both waits end at once, the groups are created and the batches stored.
// Without a fixed number of senders nothing is cut.
func TestWaitNeverTakesTheLastSender(t *testing.T) {
	for _, tc := range []struct {
		name     string
		senders  int
		wantCuts int
	}{
		{"two senders", 2, 2},
		{"no fixed number of senders", 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := &groupsAPI{streams: map[string]map[string]bool{}}
			obs := &cutObserver{}
			s := New(api, Config{Backoff: Backoff{Initial: time.Hour, Max: time.Hour}, CreateGroupRate: 1000, CreateStreamRate: 1000, Senders: tc.senders}, obs, zap.NewNop())
			defer s.Stop()
			entered := make(chan string, 16)
			s.sleep = func(ctx context.Context, _ time.Duration) error {
				entered <- "wait"
				select { // an hour: ends only when cut (or Stop)
				case <-ctx.Done():
					return ctx.Err()
				case <-s.stop:
					return errStopping
				}
			}
			put := func(ctx context.Context, group, stream string) error {
				_, err := s.Put(WithDeadline(ctx, time.Now().Add(time.Hour)), group, stream, []types.InputLogEvent{{Message: aws.String("m"), Timestamp: aws.Int64(1)}})
				return err
			}
			errs := make(chan error, 4)
			// A wait that holds no sender (creating ahead) is never cut.
			s.Ahead("ahead", "s")
			<-entered
			// The first push: two batches in two new groups, one sender.
			first := WithSend(context.Background())
			go func() { errs <- put(first, "g1", "a") }()
			go func() { errs <- put(first, "g2", "a") }()
			<-entered
			<-entered
			require.Never(t, func() bool { return obs.count() > 0 || len(errs) > 0 }, 100*time.Millisecond, 5*time.Millisecond,
				"one sender is still free: the waits run on")
			// The second push joins g1's wait: no sender is left free.
			go func() { errs <- put(WithSend(context.Background()), "g1", "b") }()
			if tc.senders == 0 {
				require.Never(t, func() bool { return len(errs) > 0 }, 100*time.Millisecond, 5*time.Millisecond)
				s.Stop()
				for range 3 {
					require.Error(t, <-errs)
				}
				require.Zero(t, obs.count())
				return
			}
			require.Eventually(t, func() bool { return len(errs) == 3 }, 10*time.Second, time.Millisecond, "the waits were not cut")
			for range 3 {
				require.NoError(t, <-errs)
			}
			require.Equal(t, tc.wantCuts, obs.count(), "the two waits holding senders ended, the one ahead did not")
			_, creates, stored := api.counts()
			require.Equal(t, 2, creates, "g1 and g2 created once each")
			require.Equal(t, 3, stored)
			select {
			case <-entered:
				t.Fatal("no new wait after the cut")
			default:
			}
		})
	}
}

// TestLockKeyHeldByOneCallerAtATime: a key's lock outlives the holder's unlock while another
// caller waits for it, so a caller that comes after that unlock waits for the waiter instead
// of creating a second lock of the same key.
func TestLockKeyHeldByOneCallerAtATime(t *testing.T) {
	s := &Sender{streamLocks: map[string]*keyLock{}}
	unlockA := s.lockKey("g\x00s")
	refs := func() int {
		s.mu.Lock()
		defer s.mu.Unlock()
		if l := s.streamLocks["g\x00s"]; l != nil {
			return l.refs
		}
		return 0
	}
	heldB, releaseB := make(chan struct{}), make(chan struct{})
	go func() {
		unlock := s.lockKey("g\x00s")
		close(heldB)
		<-releaseB
		unlock()
	}()
	require.Eventually(t, func() bool { return refs() == 2 }, 5*time.Second, time.Millisecond, "B waits for the key")
	unlockA()
	<-heldB
	heldC := make(chan func())
	go func() { heldC <- s.lockKey("g\x00s") }()
	require.Eventually(t, func() bool { return refs() == 2 }, 5*time.Second, time.Millisecond, "C waits for the key")
	select {
	case unlock := <-heldC:
		unlock()
		t.Fatal("C holds the key while B does")
	default:
	}
	close(releaseB)
	unlockC := <-heldC
	unlockC()
	require.Zero(t, refs(), "the key's lock is forgotten once nobody holds or waits for it")
}
