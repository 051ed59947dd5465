package lockbridge

import (
	"fmt"
	"math/rand"
	"time"
)

// Backoff decides how long Locker.Lock waits between two attempts. Lockers
// never wait longer than the current holder has left when they can tell, and
// wake at once on a release notification where those are on, so a Backoff is
// the upper bound of a wait, not its exact length.
type Backoff interface {
	// Delay returns the wait before retry n (n is 1 for the first retry), or
	// false to stop retrying: Lock then returns ErrNotObtained.
	Delay(n int) (time.Duration, bool)
}

// ExponentialBackoff doubles the wait from min up to max, with jitter: each
// delay is drawn uniformly from [d/2, d] so that waiters woken together do not
// retry together. min must be positive and max at least min.
func ExponentialBackoff(min, max time.Duration) Backoff {
	return exponential{min: min, max: max}
}

type exponential struct{ min, max time.Duration }

// Validate reports an error wrapping ErrInvalid for out-of-range arguments:
// the lockers' WithBackoff options call it, so a bad Backoff makes the
// Locker's calls fail rather than wait wrongly.

func (e exponential) Validate() error {
	if e.min <= 0 || e.max < e.min {
		return fmt.Errorf("%w: exponential backoff needs 0 < min <= max, got min %v, max %v", ErrInvalid, e.min, e.max)
	}
	return nil
}

func (e exponential) Delay(n int) (time.Duration, bool) {
	if n < 1 {
		n = 1
	}
	d := e.min
	for i := 1; i < n && d < e.max; i++ {
		d *= 2
	}
	if d > e.max || d <= 0 {
		d = e.max
	}
	half := d / 2
	return half + time.Duration(rand.Int63n(int64(d-half)+1)), true
}

// LinearBackoff waits step, 2×step, 3×step, … up to max, without jitter.
// LinearBackoff(d, d) polls at a constant interval d. step must be positive
// and max at least step.
func LinearBackoff(step, max time.Duration) Backoff {
	return linear{step: step, max: max}
}

type linear struct{ step, max time.Duration }

func (l linear) Validate() error {
	if l.step <= 0 || l.max < l.step {
		return fmt.Errorf("%w: linear backoff needs 0 < step <= max, got step %v, max %v", ErrInvalid, l.step, l.max)
	}
	return nil
}

func (l linear) Delay(n int) (time.Duration, bool) {
	if n < 1 {
		n = 1
	}
	if int64(n) > int64(l.max/l.step) {
		return l.max, true
	}
	return time.Duration(n) * l.step, true
}

// NoRetry never waits: Lock makes a single attempt, as TryLock does.
func NoRetry() Backoff { return noRetry{} }

type noRetry struct{}

func (noRetry) Delay(int) (time.Duration, bool) { return 0, false }
