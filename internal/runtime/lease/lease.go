package lease

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/internal/runtime/telemetry"
)

// Lease is the local view of one held lock. The zero value is not usable:
// build one with New or Init. Its methods are safe for concurrent use.
type Lease struct {
	pkg string // prefix of error messages: "modern", "migrate", …

	// mu guards the fields below. Nothing that can block runs under it
	// (no I/O, no callback): the give-up timer takes it.
	mu      sync.Mutex
	expires time.Time     // local lease end (monotonic)
	ttl     time.Duration // the lease length last granted
	ceiling time.Duration // Unsure: no grant counts for more (0: none)
	ended   bool
	err     error         // why it ended: nil for a clean release
	done    chan struct{} // made on first use by Done; closed on End
	timer   *time.Timer   // the give-up timer: ends the lease at giveUp()
	last    error         // the refresher's last failure since its last success
	cancel  context.CancelFunc
	exited  chan struct{} // closed when the running refresher returned
	kick    chan struct{} // Extend tells the refresher to reschedule
	tel     *telemetry.T  // set by Observe: reports refreshes and the loss
	key     string        // the lock's key, for tel
}

// New returns the lease of a lock obtained with a lease of ttl, the attempt
// having been sent at start. pkg prefixes error messages.
func New(pkg string, start time.Time, ttl time.Duration) *Lease {
	l := &Lease{}
	l.Init(pkg, start, ttl)
	return l
}

// Init prepares a Lease embedded by value in a lock (one allocation less
// than New). It must be called before any other method, once. It arms the
// give-up timer (for a positive ttl): whatever else happens, the lease ends
// as lost at its give-up point, ttl/12 before its local end.
func (l *Lease) Init(pkg string, start time.Time, ttl time.Duration) {
	l.pkg = pkg
	l.expires = start.Add(ttl)
	l.ttl = ttl
	if ttl > 0 {
		l.mu.Lock() // the timer may fire before AfterFunc returns
		defer l.mu.Unlock()
		l.timer = time.AfterFunc(time.Until(l.giveUp()), l.expire)
	}
}

// giveUp is when the lease ends by the timer: the local end minus the
// margin, ttl/12 of the lease last granted. Under mu.
func (l *Lease) giveUp() time.Time { return l.expires.Add(-l.ttl / 12) }

// arm sets the timer to the give-up point. Under mu.
func (l *Lease) arm() {
	if l.timer != nil {
		l.timer.Reset(time.Until(l.giveUp()))
	}
}

// expire is the give-up timer's function: it ends the lease as lost once
// the give-up point has passed (a lease moved meanwhile re-arms it). It
// waits for nothing but mu, and closes Done before it reports the loss.
func (l *Lease) expire() {
	l.mu.Lock()
	if l.ended {
		l.mu.Unlock()
		return
	}
	if time.Now().Before(l.giveUp()) {
		l.arm()
		l.mu.Unlock()
		return
	}
	l.finish(&LostError{Pkg: l.pkg, Cause: &RanOutError{Last: l.last, Refreshed: l.kick != nil}})
}

// ExpiresAt is the local end of the lease: when the last successful acquire
// or refresh was sent, plus its ttl. A nil *Lease (a nil lock's) has the
// zero time.
func (l *Lease) ExpiresAt() time.Time {
	if l == nil {
		return time.Time{}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.expires
}

// TTL is the lease length last granted (by the acquire or a refresh).
func (l *Lease) TTL() time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ttl
}

// Extend records a confirmed refresh: the lease now ends at expires (the
// refresh's send time plus its ttl) and is ttl long. A lease that has ended
// — or whose give-up point passed before the confirmation, though the timer
// has not run yet — is over: nothing revives it. Extend then returns an
// error wrapping lockbridge.ErrNotHeld (and the loss, lockbridge.ErrLost).
func (l *Lease) Extend(expires time.Time, ttl time.Duration) error {
	l.mu.Lock()
	if !l.ended && !time.Now().Before(l.giveUp()) {
		l.finish(&LostError{Pkg: l.pkg, Cause: &RanOutError{Last: l.last, Refreshed: l.kick != nil}})
		l.mu.Lock()
	}
	defer l.mu.Unlock()
	if l.ended {
		if l.err == nil {
			return fmt.Errorf("%s: refresh confirmed after the lock was released: %w", l.pkg, lockbridge.ErrNotHeld)
		}
		return fmt.Errorf("%s: refresh confirmed after the lease had ended: %w: %w", l.pkg, lockbridge.ErrNotHeld, l.err)
	}
	if l.ceiling > 0 && ttl > l.ceiling {
		expires, ttl = expires.Add(l.ceiling-ttl), l.ceiling
	}
	l.expires, l.ttl = expires, ttl
	l.moved()
	return nil
}

// Unsure records a write that sets the server's lease to ttl and whose
// outcome is unknown (its reply never came): it may still run on the
// server at any later time and set the lease to ttl from then — after, and
// below, a grant confirmed meanwhile. From now on no grant counts for more
// than ttl past its own send: Extend caps it (and Sending has already capped
// the lease at this write's send time plus ttl).
func (l *Lease) Unsure(ttl time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if ttl > 0 && (l.ceiling == 0 || ttl < l.ceiling) {
		l.ceiling = ttl
	}
}

// Sending records that a refresh of ttl is sent at sent: from now on it may
// take effect on the server whether or not its reply ever comes, so the
// local lease may end no later than sent+ttl. It shortens the lease to
// min(its end, sent+ttl) (and its ttl to the shorter one, for the margin);
// a refresh to the same or a longer ttl changes nothing until confirmed
// (Extend). Call it before every refresh is sent.
func (l *Lease) Sending(sent time.Time, ttl time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ended {
		return
	}
	if end := sent.Add(ttl); end.Before(l.expires) {
		l.expires = end
		l.ttl = min(l.ttl, ttl)
		l.moved()
	}
}

// moved re-arms the timer and tells a running refresher (to count its
// period from the new lease) after the lease moved. Under mu.
func (l *Lease) moved() {
	l.arm()
	if l.kick != nil {
		select {
		case l.kick <- struct{}{}:
		default:
		}
	}
}

// closed is a closed channel, returned by Done for a lease that ended before
// anyone asked for its channel. It is never written to after init.
var closed = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

// Done is closed when the lease ends: released or lost. A nil *Lease (a
// nil lock's) is done.
func (l *Lease) Done() <-chan struct{} {
	if l == nil {
		return closed
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.done == nil {
		if l.ended {
			return closed
		}
		l.done = make(chan struct{})
	}
	return l.done
}

// Err is nil while the lease runs and after a clean release; after a loss
// it is a *LostError (wrapping lockbridge.ErrLost and the cause).
func (l *Lease) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// ErrOr is Err, or nilLock for a nil *Lease (a nil lock's).
func (l *Lease) ErrOr(nilLock error) error {
	if l == nil {
		return nilLock
	}
	return l.Err()
}

// Field returns get(lk), or the zero value for a nil lock: the nil-safe
// accessors of the lock types.
func Field[L, T any](lk *L, get func(*L) T) T {
	if lk == nil {
		var zero T
		return zero
	}
	return get(lk)
}

// Ended reports whether the lease has ended.
func (l *Lease) Ended() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ended
}

// End ends the lease: cleanly when err is nil, otherwise with err as the
// reason (use Lose for a loss). Only the first call has an effect; it reports
// whether this call ended the lease. End does not stop the refresher (which
// stops by itself once it sees the lease ended): call StopRefresh for that.
func (l *Lease) End(err error) bool {
	l.mu.Lock()
	if l.ended {
		l.mu.Unlock()
		return false
	}
	l.finish(err)
	return true
}

// finish ends the lease with err, called under mu, which it releases. It
// closes Done first and reports the loss after, outside mu: the report
// calls the caller's logger and meter, which may block, and the give-up
// timer is stopped by then — nothing the loss signal waits for may run
// before Done closes.
func (l *Lease) finish(err error) {
	l.ended, l.err = true, err
	if l.timer != nil {
		l.timer.Stop()
	}
	done, tel, key := l.done, l.tel, l.key
	l.mu.Unlock()
	if done != nil {
		close(done)
	}
	if _, lost := err.(*LostError); lost && tel != nil {
		tel.Lost(context.Background(), key, err)
	}
}

// RanOut reports whether the lease ended because its give-up point passed
// (no refresh confirmed in time, or none was made): the lock was neither
// released nor found gone, so an Unlock may still release it on the server.
func (l *Lease) RanOut() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	var ro *RanOutError
	return l.ended && errors.As(l.err, &ro)
}

// Lose ends the lease as lost because of cause (which may be nil), and
// reports whether this call ended it.
func (l *Lease) Lose(cause error) bool {
	return l.End(&LostError{Pkg: l.pkg, Cause: cause})
}

// LostError is the Err of a lost lease. It wraps lockbridge.ErrLost and the
// cause, so errors.Is(err, lockbridge.ErrLost) holds and errors.As finds the
// cause's type (a *lockbridge.NotHeldError when a refresh found the
// lock gone or taken).
type LostError struct {
	Pkg   string // the lock package, prefix of the message
	Cause error  // what showed the loss: a not-held reply, the last Redis error, …
}

func (e *LostError) Error() string {
	if e.Cause == nil {
		return e.Pkg + ": lock lost: the lease ran out before a refresh succeeded"
	}
	// The cause usually comes from the same package: do not repeat its prefix.
	return e.Pkg + ": lock lost: " + strings.TrimPrefix(e.Cause.Error(), e.Pkg+": ")
}

// RanOutError is the cause of a lease lost by its give-up point: no
// refresh was confirmed in time, or the lock has no auto-refresh.
type RanOutError struct {
	Last      error // the refresher's last failure, if any
	Refreshed bool  // the lock had an auto-refresh
}

func (e *RanOutError) Error() string {
	switch {
	case e.Last != nil:
		return "the lease ran out before a refresh succeeded: " + e.Last.Error()
	case e.Refreshed:
		return "the lease ran out before a refresh succeeded"
	}
	return "the lease ran out (the lock is not refreshed automatically)"
}

// Unwrap returns the refresher's last failure.
func (e *RanOutError) Unwrap() error { return e.Last }

// Unwrap returns lockbridge.ErrLost and the cause.
func (e *LostError) Unwrap() []error {
	if e.Cause == nil {
		return []error{lockbridge.ErrLost}
	}
	return []error{lockbridge.ErrLost, e.Cause}
}

// Observe makes tel (which may be nil) report the refreshes of the lock
// key by the refresher, and its loss (Lose), whoever finds it. Call it
// before AutoRefresh, for locks whose loss happens in the background.
func (l *Lease) Observe(tel *telemetry.T, key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.tel, l.key = tel, key
}

// RefreshFunc refreshes the lock once, within ctx. On success it has called
// Extend with the new lease end; when the lock is no longer ours it returns
// an error wrapping lockbridge.ErrNotHeld; any other error (Redis
// unreachable, timeout) makes the loop retry until the give-up point.
type RefreshFunc func(ctx context.Context) error

// AutoRefresh starts the refresher: a goroutine that calls refresh on the
// schedule in the package documentation until StopRefresh, or until the
// lease ends (released, or lost: then it ends the lease itself, with Err a
// *LostError). ctx's values (not its cancellation) are passed on to refresh.
// It does nothing when the lease has ended or a refresher already runs.
// Call Observe first to have its refreshes reported.
func (l *Lease) AutoRefresh(ctx context.Context, refresh RefreshFunc) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ended || l.cancel != nil {
		return
	}
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	exited := make(chan struct{})
	l.cancel, l.exited = cancel, exited
	if l.kick == nil {
		l.kick = make(chan struct{}, 1)
	}
	go l.run(rctx, exited, refresh, l.kick)
}

// StopRefresh stops the refresher, if one runs, and returns once it has
// returned: no refresh is in flight or will be sent after it. Call it before
// releasing the lock. It must not be called from within the RefreshFunc.
func (l *Lease) StopRefresh() {
	l.mu.Lock()
	cancel, exited := l.cancel, l.exited
	l.cancel, l.exited = nil, nil
	l.mu.Unlock()
	if cancel != nil {
		cancel()
		<-exited
	}
}

// schedule returns what the refresher needs: the refresh period, the retry
// interval, the give-up point and whether the lease has ended.
func (l *Lease) schedule() (period, retry time.Duration, giveUp time.Time, ended bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	period, retry = l.ttl/3, l.ttl/12
	if retry < time.Millisecond {
		retry = time.Millisecond
	}
	if period < retry {
		period = retry
	}
	return period, retry, l.giveUp(), l.ended
}

// failed records the refresher's last failure (nil: a success), the cause
// the give-up timer names.
func (l *Lease) failed(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.last = err
}

// run is the refresher. It never ends the lease for lack of a refresh: the
// give-up timer does, whatever the refresh in flight is doing. Each call
// gets a deadline no later than the give-up point.
func (l *Lease) run(ctx context.Context, exited chan struct{}, refresh RefreshFunc, kick chan struct{}) {
	defer close(exited)
	done := l.Done() // closed by the timer, a Refresh, a TTL call or Unlock
	period, _, _, _ := l.schedule()
	timer := time.NewTimer(period)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-done:
			return
		case <-kick: // a refresh (by hand, or ours) moved the lease: count the period from it
			p, _, _, _ := l.schedule()
			if !timer.Stop() {
				select {
				case <-timer.C:
				default:
				}
			}
			timer.Reset(p)
			continue
		case <-timer.C:
		}
		period, retry, giveUp, ended := l.schedule()
		left := time.Until(giveUp)
		if ended || left <= 0 {
			continue // the timer ends the lease: wait for done
		}
		cctx, cancel := context.WithTimeout(ctx, min(period, left))
		err := refresh(cctx)
		cancel()
		if ctx.Err() != nil {
			return // stopped: StopRefresh is waiting for us
		}
		switch {
		case err == nil:
			l.tel.Refreshed(ctx, l.key, telemetry.OutcomeRefreshed, nil)
			l.failed(nil)
			period, _, _, _ = l.schedule() // Extend may have changed the ttl
			timer.Reset(period)
		case errors.Is(err, lockbridge.ErrNotHeld):
			l.tel.Refreshed(ctx, l.key, telemetry.OutcomeNotHeld, err)
			l.Lose(err)
			return
		default:
			l.tel.Refreshed(ctx, l.key, telemetry.OutcomeError, err)
			l.failed(err)
			timer.Reset(max(min(time.Until(giveUp), retry), 0))
		}
	}
}

// Closed returns a closed channel: the Done of a lock that is not held at
// all (a nil *Lock), in every lock package.
func Closed() <-chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}
