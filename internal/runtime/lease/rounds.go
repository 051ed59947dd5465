package lease

import (
	"errors"
	"sync"
)

// ErrRoundInFlight is the auto-refresh's error when a refresh by hand is in
// flight: it skips its turn and retries ttl/12 later, like after any other
// failure.
var ErrRoundInFlight = errors.New("a refresh by hand is in flight")

// Rounds serialises a lock's refresh rounds, so that the lease records the
// round that reached Redis last. A refresh by hand waits for the round in
// flight (an auto-refresh's is bounded by its deadline); the auto-refresh
// never waits: a round by hand whose reply is lost on a hung connection
// cannot hold it. The zero value is ready for use.
type Rounds struct{ mu sync.Mutex }

// Enter takes the turn: it waits for it when auto is false, and returns
// ErrRoundInFlight at once instead of waiting when auto is true.
func (r *Rounds) Enter(auto bool) error {
	if !auto {
		r.mu.Lock()
		return nil
	}
	if !r.mu.TryLock() {
		return ErrRoundInFlight
	}
	return nil
}

// Leave ends the turn Enter took.
func (r *Rounds) Leave() { r.mu.Unlock() }
