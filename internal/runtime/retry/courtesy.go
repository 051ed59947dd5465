package retry

import (
	"math/rand"
	"time"

	"github.com/lockbridge/lockbridge"
)

// Courtesy makes a Locker's waiters wait as the lock's polling contenders
// do (the Java lockers poll every 100 ms, and their releases publish
// nothing). Without it, a Go waiter woken the moment a Go holder releases,
// or polling from 10 ms, takes most of the hand-offs, and a poller gets in
// only when its poll lands in a gap.
//
// While Active reports true (always, when Active is nil), a wait between
// two attempts is drawn from [Poll/2, Poll] — a poller's interval at most,
// jittered so that waiters do not poll in step — and no release notice cuts
// it short (Loop asks Quiet).
// A Locker so configured contends as one more poller would.
//
// A nil *Courtesy, or one with Poll 0, does nothing. Its methods are safe
// for concurrent use.
type Courtesy struct {
	Poll   time.Duration
	Active func() bool
}

// on reports whether the courtesy applies now.
func (c *Courtesy) on() bool {
	return c != nil && c.Poll > 0 && (c.Active == nil || c.Active())
}

// pause is a poller's pause: drawn from [Poll/2, Poll].
func (c *Courtesy) pause() time.Duration {
	half := c.Poll / 2
	return half + time.Duration(rand.Int63n(int64(c.Poll-half)+1))
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
