package retry

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/internal/runtime/queue"
	"github.com/lockbridge/lockbridge/internal/runtime/telemetry"
)

// Attempt makes one try. When the lock is held by someone else it returns an
// error wrapping lockbridge.ErrNotObtained and, when the scheme can tell, how
// long the holder has left (0 when unknown).
type Attempt[L any] func(ctx context.Context) (lock L, holderLeft time.Duration, err error)

// Loop calls try until it succeeds, fails with anything but ErrNotObtained
// or a cluster refusal (see Refused), the backoff gives up, or ctx ends. A
// refusal — the slot moving, or the cluster briefly unable to serve it —
// is waited after like a failed attempt (the backoff counts it; it is not
// counted as contended): the command did not run, and the lock's key is
// served again once the move ends. A receive on wake (which may be nil)
// cuts the current wait short, unless the backoff is a Courtesy's that is
// Quiet then. When ctx ends, the error wraps both
// lockbridge.ErrNotObtained and ctx.Err() — unless the last attempt's
// outcome is unknown (lockbridge.ErrUnknownOutcome): that error is returned
// as it is, never as not obtained. tel (which may be nil) counts each
// attempt that found the lock held and the time spent waiting. An attempt
// that returns queue.ErrBehind (its waiter is not at the head of its line,
// see package queue) is waited after like a failed one — the backoff counts
// it — but not counted as contended.
func Loop[L any](ctx context.Context, tel *telemetry.T, b lockbridge.Backoff, wake <-chan struct{},
	try Attempt[L]) (L, error) {
	return LoopDelayed(ctx, tel, b, wake, try, nil)
}

// LoopDelayed is Loop for attempts that may wait before they send (modern's
// order across processes): the time they add to *delayed (nil: none)
// counts as waited.
func LoopDelayed[L any](ctx context.Context, tel *telemetry.T, b lockbridge.Backoff, wake <-chan struct{},
	try Attempt[L], delayed *time.Duration) (L, error) {
	var zero L
	var s sleeper
	defer func() {
		if s.timer != nil {
			s.timer.Stop()
		}
		if delayed != nil {
			s.waited += *delayed
		}
		tel.Waited(ctx, s.waited)
	}()
	for n := 1; ; n++ {
		l, left, err := try(ctx)
		if err == nil {
			return l, nil
		}
		if stop := judge(ctx, tel, err); stop != nil {
			return zero, stop
		}
		d, ok := b.Delay(n)
		if !ok {
			return zero, err
		}
		if left > 0 && left < d {
			d = left
		}
		w := wake
		if q, ok := b.(quiet); ok && q.Quiet() {
			w = nil
		}
		if cerr := s.sleep(ctx, d, w); cerr != nil {
			return zero, ended(err, cerr)
		}
	}
}

// judge judges a failed attempt's err for Loop: the error Loop returns, or
// nil when Loop waits and tries again (counting the attempt as contended
// when it found the lock held).
func judge(ctx context.Context, tel *telemetry.T, err error) error {
	if errors.Is(err, lockbridge.ErrUnknownOutcome) {
		// The attempt may have taken the lock: never reported as not
		// obtained, even when ctx has ended (its error is in err).
		return err
	}
	if cerr := ctx.Err(); cerr != nil {
		return ended(err, cerr)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		// The driver saw the deadline pass a moment before ctx did.
		return ended(err, context.DeadlineExceeded)
	}
	refused := Refused(err)
	if !refused && !errors.Is(err, lockbridge.ErrNotObtained) {
		return err
	}
	if !refused && !errors.Is(err, queue.ErrBehind) {
		tel.Contended(ctx) // waiting behind a waiter of our own is no attempt
	}
	return nil
}

// sleeper is Loop's waits between attempts: one timer, reused, and the time
// spent waiting.
type sleeper struct {
	timer  *time.Timer
	waited time.Duration
}

// sleep waits d, or until a receive on wake (which may be nil); it returns
// ctx's error when ctx ends first.
func (s *sleeper) sleep(ctx context.Context, d time.Duration, wake <-chan struct{}) error {
	if s.timer == nil {
		s.timer = time.NewTimer(d)
	} else {
		s.timer.Reset(d)
	}
	start := time.Now()
	defer func() { s.waited += time.Since(start) }()
	select {
	case <-s.timer.C:
	case <-wake:
		if !s.timer.Stop() {
			<-s.timer.C
		}
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

// Refused reports whether err carries a Redis Cluster refusal — MOVED, ASK,
// TRYAGAIN, CLUSTERDOWN (driver.ErrMoved, driver.ErrClusterDown) — that
// the adapter did not get past within its bounds, and nothing says the
// attempt may have changed anything (lockbridge.ErrUnknownOutcome). Redis
// sends a refusal instead of running the command.
func Refused(err error) bool {
	return (errors.Is(err, driver.ErrMoved) || errors.Is(err, driver.ErrClusterDown)) &&
		!errors.Is(err, lockbridge.ErrUnknownOutcome)
}

// ended is the error of a wait cut short by its context: it wraps
// ErrNotObtained, the context's error and the last attempt's (a Redis error
// stays visible to errors.Is and errors.As).
func ended(last, cerr error) error {
	if errors.Is(last, lockbridge.ErrNotObtained) {
		return fmt.Errorf("%w: %w", last, cerr)
	}
	return fmt.Errorf("%w: %w (last attempt: %w)", lockbridge.ErrNotObtained, cerr, last)
}
