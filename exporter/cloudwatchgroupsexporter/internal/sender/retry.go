// SPDX-License-Identifier: Apache-2.0

package sender

// Retries (design.md, section 6): the backoff of one call, the request's retry deadline and
// the loop that retries throttled and failed calls.

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

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
