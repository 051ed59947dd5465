package retry

import (
	"context"
	"fmt"
	"math/rand"
	"sync"
	"time"

	"github.com/lockbridge/lockbridge"
)

// Courtesy makes a Locker's waiters defer to contenders that poll (the
// Java lockers poll every 100 ms, and their releases publish nothing).
// Without it, a Go waiter woken the moment a Go holder releases, or a Go
// holder that locks again at once after its own release, takes nearly every
// hand-off, and a poller gets in only when its poll lands in the gap.
//
// While Active reports true (always, when Active is nil):
//
//   - a wait between two attempts is drawn from [Poll/2, Poll], as a
//     poller's, and no release notice cuts it short (Loop asks Quiet);
//   - a Lock of a key this Locker has just released leaves the key free
//     for a hand-off window first, drawn from [Poll/80, Poll/40] since the
//     release (1.25 to 2.5 ms for 100 ms pollers; Yield): about what a Java
//     service takes between its release and its next SETNX, so that a
//     poller's attempt has the same chance to land between a Go holder's
//     release and its next lock as between a Java holder's. A longer
//     window hands the lock to Java services that lock again at once (they
//     then take nearly all of it); none leaves the Go holder a gap a 100 ms
//     poll rarely hits.
//
// A nil *Courtesy, or one with Poll 0, does nothing. Its methods are safe
// for concurrent use.
type Courtesy struct {
	Poll   time.Duration
	Active func() bool

	mu       sync.Mutex
	released map[string]time.Time // key → this Locker's last release of it
}

// on reports whether the courtesy applies now.
func (c *Courtesy) on() bool {
	return c != nil && c.Poll > 0 && (c.Active == nil || c.Active())
}

// pause is a poller's pause: drawn from [Poll/2, Poll].
func (c *Courtesy) pause() time.Duration { return between(c.Poll/2, c.Poll) }

// handoff is the hand-off window after this Locker's own release: drawn
// from [Poll/80, Poll/40].
func (c *Courtesy) handoff() time.Duration { return between(c.Poll/80, c.Poll/40) }

// between draws a duration uniformly from [lo, hi].
func between(lo, hi time.Duration) time.Duration {
	return lo + time.Duration(rand.Int63n(int64(hi-lo)+1))
}

// Released records that this Locker released key now. Entries older than
// Poll are pruned as others are added, so the map holds only the keys
// released within the last Poll.
func (c *Courtesy) Released(key string) {
	if c == nil || c.Poll <= 0 {
		return
	}
	now := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.released == nil {
		c.released = map[string]time.Time{}
	}
	if len(c.released) >= 64 {
		for k, at := range c.released {
			if now.Sub(at) >= c.Poll {
				delete(c.released, k)
			}
		}
	}
	c.released[key] = now
}

// Yield waits, before a Lock's first attempt on key, until the hand-off
// window has passed since this Locker released key (nothing when it did not
// release it within the last Poll, or the courtesy is off). When ctx ends
// first the error wraps lockbridge.ErrNotObtained and ctx.Err().
func (c *Courtesy) Yield(ctx context.Context, key string) error {
	if !c.on() {
		return nil
	}
	c.mu.Lock()
	at, ok := c.released[key]
	c.mu.Unlock()
	if !ok {
		return nil
	}
	d := time.Until(at.Add(c.handoff()))
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%w: %w (yielding to pollers)", lockbridge.ErrNotObtained, ctx.Err())
	}
}

// Backoff returns b, made courteous: while the courtesy applies, its delay
// is a poller's pause (unless b gives up, which it still may) and it is
// Quiet. A nil or disabled courtesy returns b itself.
func (c *Courtesy) Backoff(b lockbridge.Backoff) lockbridge.Backoff {
	if c == nil || c.Poll <= 0 {
		return b
	}
	return courteous{b: b, c: c}
}

type courteous struct {
	b lockbridge.Backoff
	c *Courtesy
}

func (p courteous) Delay(n int) (time.Duration, bool) {
	d, again := p.b.Delay(n)
	if !again || !p.c.on() {
		return d, again
	}
	return p.c.pause(), true
}

// Quiet reports whether release notices must not cut the current wait
// short.
func (p courteous) Quiet() bool { return p.c.on() }

// quiet is a Backoff whose waits a release notice may not cut short while
// Quiet reports true.
type quiet interface{ Quiet() bool }
