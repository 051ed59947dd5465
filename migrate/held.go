package migrate

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/internal/runtime/check"
	"github.com/lockbridge/lockbridge/internal/runtime/lease"
)

// tracked is a held lock a Locker with a namespace watches: its phase goes
// into the registry (the controller treats the client as still in it), and
// it ends once its phase no longer excludes the phase the Locker runs.
type tracked interface {
	lockPhase() Phase
	leaseEnd() time.Time
	leaseTTL() time.Duration
	endForPhase(cause error)
	ended() bool
}

// heldSet is a Locker's held locks.
type heldSet struct {
	mu sync.Mutex
	m  map[tracked]struct{}
}

func (s *heldSet) add(t tracked) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[tracked]struct{}{}
	}
	s.m[t] = struct{}{}
}

// report drops the ended locks and sums up the others.
func (s *heldSet) report() heldReport {
	s.mu.Lock()
	defer s.mu.Unlock()
	var r heldReport
	now := time.Now()
	for t := range s.m {
		if t.ended() {
			delete(s.m, t)
			continue
		}
		p := t.lockPhase()
		if r.oldest == 0 || p < r.oldest {
			r.oldest = p
		}
		if p > r.newest {
			r.newest = p
		}
		r.left = max(r.left, t.leaseEnd().Sub(now))
		r.ttl = max(r.ttl, t.leaseTTL())
	}
	return r
}

// reserve registers an acquire about to be sent in phase p with ttl: the
// heartbeats report it as a lock held in p until settle or land.
func (s *heldSet) reserve(p Phase, ttl time.Duration) *inflight {
	r := &inflight{phase: p, ttl: ttl, start: time.Now()}
	s.add(r)
	return r
}

// land replaces the reservation r with the lock t it obtained, in one step
// so that no heartbeat misses both.
func (s *heldSet) land(r *inflight, t tracked) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[tracked]struct{}{}
	}
	s.m[t] = struct{}{}
	delete(s.m, r)
}

// settle ends the reservation r of an acquire that failed with err. One
// whose outcome is unknown may have taken the lock: it stays reported until
// its ttl has passed, by which time such a lock has expired.
func (s *heldSet) settle(r *inflight, err error) {
	if errors.Is(err, lockbridge.ErrUnknownOutcome) {
		r.mu.Lock()
		r.unknown = true
		r.mu.Unlock()
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, r)
}

// inflight is an acquire sent, or about to be, in a phase: reported as a
// held lock while its outcome is open.
type inflight struct {
	phase Phase
	ttl   time.Duration
	start time.Time // before the send: a lock it took expires by start+ttl

	mu      sync.Mutex
	unknown bool // the reply never came: reported until start+ttl
}

func (r *inflight) lockPhase() Phase        { return r.phase }
func (r *inflight) leaseEnd() time.Time     { return r.start.Add(r.ttl) }
func (r *inflight) leaseTTL() time.Duration { return r.ttl }
func (r *inflight) endForPhase(cause error) {} // the attempt checks the phase once it lands
func (r *inflight) ended() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.unknown && !time.Now().Before(r.leaseEnd())
}

// PhaseEndedError is why a held lock ended: the Locker moved to a phase
// whose lockers would not see the lock (Compatible reports false). Err of
// such a lock wraps it and lockbridge.ErrLost.
type PhaseEndedError struct {
	Key             string
	Taken, LockerAt Phase
}

func (e *PhaseEndedError) Error() string {
	return fmt.Sprintf("migrate: lock %q taken in %v ended: its locker now runs %v, which does not exclude it", e.Key,
		e.Taken, e.LockerAt)
}

// endIncompatible ends every held lock whose phase does not exclude cur:
// for neighbouring phases, and for dual-write beside modern, a lock stays;
// two phases apart otherwise, it ends (refresh fails, Done closes, Err
// wraps lockbridge.ErrLost and a *PhaseEndedError).
func (s *heldSet) endIncompatible(cur Phase, key func(tracked) string) {
	s.mu.Lock()
	var end []tracked
	for t := range s.m {
		if !Compatible(t.lockPhase(), cur) {
			end = append(end, t)
			delete(s.m, t)
		}
	}
	s.mu.Unlock()
	for _, t := range end {
		t.endForPhase(&PhaseEndedError{Key: key(t), Taken: t.lockPhase(), LockerAt: cur})
	}
}

// heldLock is a lock taken in PhaseLegacy or PhaseModern by a Locker with
// a namespace: the legacy or modern lock, with a lease of its own that the
// Locker can end, and refreshes only while the phase is trusted.
type heldLock struct {
	inner lockbridge.Lock // *legacy.Lock or *modernLock
	l     *Locker
	phase Phase
	life  lease.Lease

	mu   lease.Rounds  // serialises Unlock and the refresh rounds (see lease.Rounds)
	ttl  time.Duration // the lease last asked for
	sent landing       // what its refreshes may have done on the server
}

var _ lockbridge.Lock = (*heldLock)(nil)

// newHeldLock wraps inner, obtained with ttl by an attempt sent at start.
// With auto-refresh (modern's option) it runs the refresh itself: the
// inner lock was taken without one.
func newHeldLock(l *Locker, p Phase, inner lockbridge.Lock, ttl time.Duration, start time.Time, auto bool) *heldLock {
	h := &heldLock{inner: inner, l: l, phase: p, ttl: ttl}
	h.life.Init(pkg, start, innerTTL(inner, start, ttl))
	h.life.Observe(l.tel, inner.Key()) // a phase move ends it in the background
	if auto {
		h.life.AutoRefresh(context.Background(), func(ctx context.Context) error { return h.refresh(ctx, 0) })
	}
	go h.follow()
	return h
}

// innerTTL is the lease of a grant of ttl sent at start, no longer than
// the inner lock's own: a legacy lock ends at its written expiry W by the
// holder's clock, which a seconds profile may put well before start+ttl.
func innerTTL(inner lockbridge.Lock, start time.Time, ttl time.Duration) time.Duration {
	if end := inner.ExpiresAt(); !end.IsZero() && end.Before(start.Add(ttl)) {
		return max(end.Sub(start), 0)
	}
	return ttl
}

// follow ends the lease when the inner lock ends on its own (its timer,
// by its own rules), and stops when the lease ends.
func (h *heldLock) follow() {
	select {
	case <-h.inner.Done():
		h.mirror()
	case <-h.life.Done():
	}
}

func (h *heldLock) Key() string          { return h.inner.Key() }
func (h *heldLock) Token() string        { return h.inner.Token() }
func (h *heldLock) ExpiresAt() time.Time { return h.inner.ExpiresAt() }

// Done is closed once the lock is released or known lost — also when its
// Locker moved to a phase that does not exclude it.
func (h *heldLock) Done() <-chan struct{} { return h.life.Done() }

// Err is nil while held and after a clean Unlock; it wraps
// lockbridge.ErrLost after a loss.
func (h *heldLock) Err() error { return h.life.Err() }

// Phase returns the phase the lock was taken in.
func (h *heldLock) Phase() Phase { return h.phase }

// Fence returns the fencing token of a lock taken in PhaseModern with
// fencing, else 0.
func (h *heldLock) Fence() int64 {
	if f, ok := h.inner.(interface{ Fence() int64 }); ok {
		return f.Fence()
	}
	return 0
}

// Unlock releases the lock. A lock that ended because its Locker changed
// phase is released all the same (the caller is done with it) and the
// error wraps lockbridge.ErrNotHeld and the loss.
func (h *heldLock) Unlock(ctx context.Context) error {
	if err := check.Context(pkg, ctx); err != nil {
		return err
	}
	h.life.StopRefresh()
	_ = h.mu.Enter(false)
	defer h.mu.Leave()
	if err := h.life.Err(); err != nil && !h.life.RanOut() {
		var pe *PhaseEndedError
		if errors.As(err, &pe) {
			select {
			case <-h.inner.Done():
			default:
				_ = h.inner.Unlock(ctx)
			}
		}
		return fmt.Errorf("%s: unlock %q: %w: %w", pkg, h.Key(), lockbridge.ErrNotHeld, err)
	}
	if h.life.Ended() && !h.life.RanOut() {
		return fmt.Errorf("%s: unlock: %w", pkg, &lockbridge.NotHeldError{Pkg: pkg, Key: h.Key(),
			Reason: lockbridge.ReasonEnded, Detail: "released"})
	}
	// A lease that ran out by our clock was neither released nor found
	// gone: the inner lock's Unlock sends its release, under its rules.
	err := h.inner.Unlock(ctx)
	if err == nil {
		h.life.End(nil)
		return nil
	}
	h.mirror()
	return err
}

// Refresh extends the lock to ttl from now, if its Locker still trusts its
// phase; otherwise the error wraps ErrPhaseUnknown and the lock is left to
// run out (a later Refresh may succeed once the phase is read again).
func (h *heldLock) Refresh(ctx context.Context, ttl time.Duration) error {
	if err := check.Context(pkg, ctx); err != nil {
		return err
	}
	if ttl < time.Millisecond {
		return fmt.Errorf("%s: %w: ttl %v is below 1ms", pkg, lockbridge.ErrInvalid, ttl)
	}
	return h.refresh(ctx, ttl)
}

// refresh with ttl 0 keeps the last ttl (the auto-refresh, which never
// waits behind a Refresh by hand). The lease is shortened before the send
// (lease.Sending).
func (h *heldLock) refresh(ctx context.Context, ttl time.Duration) error {
	if err := h.mu.Enter(ttl == 0); err != nil {
		return err
	}
	defer h.mu.Leave()
	if ttl == 0 {
		ttl = h.ttl
	}
	if h.life.Ended() {
		if err := h.life.Err(); err != nil {
			return fmt.Errorf("%s: refresh %q: %w: %w", pkg, h.Key(), lockbridge.ErrNotHeld, err)
		}
		return fmt.Errorf("%s: refresh: %w", pkg, &lockbridge.NotHeldError{Pkg: pkg, Key: h.Key(),
			Reason: lockbridge.ReasonEnded, Detail: "released"})
	}
	until, err := h.l.follow.trusted(ctx, ttl)
	if err != nil {
		return fmt.Errorf("%s: refresh %q: %w", pkg, h.Key(), err)
	}
	start := time.Now()
	h.life.Sending(start, ttl)
	h.sent.send()
	err = h.inner.Refresh(ctx, ttl)
	h.sent.back(ttl)
	if errors.Is(err, lockbridge.ErrUnknownOutcome) {
		h.life.Unsure(ttl) // it may run later, after a grant confirmed meanwhile
	}
	if err != nil {
		h.mirror()
		return err
	}
	h.ttl = ttl
	if !time.Now().Before(until) {
		// Back after the phase lease ended: the registry may not cover
		// the new lease. Keep the one it covered.
		return fmt.Errorf("%s: refresh %q: %w", pkg, h.Key(), h.l.follow.outlived(h.phase, "refresh"))
	}
	return h.life.Extend(start.Add(innerTTL(h.inner, start, ttl)), ttl)
}

// mirror ends our lease when the inner lock ended.
func (h *heldLock) mirror() {
	select {
	case <-h.inner.Done():
		if err := h.inner.Err(); err != nil {
			h.life.End(err)
		} else {
			h.life.End(nil)
		}
	default:
	}
}

func (h *heldLock) lockPhase() Phase        { return h.phase }
func (h *heldLock) leaseEnd() time.Time     { return later(h.inner.ExpiresAt(), h.sent.bound()) }
func (h *heldLock) leaseTTL() time.Duration { return max(h.life.TTL(), h.ttl) }
func (h *heldLock) endForPhase(cause error) { h.life.Lose(cause) }
func (h *heldLock) ended() bool             { return over(&h.life, &h.sent) }

func (d *dualLock) lockPhase() Phase        { return d.phase }
func (d *dualLock) leaseEnd() time.Time     { return reportedEnd(&d.life, &d.sent) }
func (d *dualLock) leaseTTL() time.Duration { return max(d.life.TTL(), d.lease) }
func (d *dualLock) endForPhase(cause error) { d.life.Lose(cause) }
func (d *dualLock) ended() bool             { return over(&d.life, &d.sent) }

// over reports whether a held lock may leave the heartbeats' report: it
// was released, or it ended otherwise (lost, its lease ran out, its unlock
// failed) and both its local lease end and what its refreshes may have
// done on the server (sent) have passed — until then the server may still
// hold it.
func over(l *lease.Lease, sent *landing) bool {
	if !l.Ended() {
		return false
	}
	if l.Err() == nil {
		return true
	}
	now := time.Now()
	return !now.Before(l.ExpiresAt()) && !sent.open(now)
}

// reportedEnd is until when the heartbeats report a held lock: its local
// lease end, or later while a refresh it sent may hold it on the server.
func reportedEnd(l *lease.Lease, sent *landing) time.Time { return later(l.ExpiresAt(), sent.bound()) }

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// landing bounds what the refreshes a lock sent may have done on the
// server. A refresh extends the server's lease by its ttl from when it
// runs there, which a slow network or a stalled server may put after the
// lock's local lease has ended (a refresh answered after the give-up
// extends nothing here). So while one is in flight the lock stays
// reported, and after each one that did not surely fail, until its ttl
// has passed since its reply (or its error).
type landing struct {
	mu       sync.Mutex
	inflight int
	until    time.Time
}

// send records a refresh about to be sent.
func (g *landing) send() {
	g.mu.Lock()
	g.inflight++
	g.mu.Unlock()
}

// back records that a refresh of ttl came back, whatever it says: even
// one answered "not held" may have been refused by a server that is not
// the one that ran an earlier send, and one "confirmed after the lease had
// ended" did extend the server's lease. Reporting a lock a ttl longer than
// needed costs a controller step a little time; too short, two holders.
func (g *landing) back(ttl time.Duration) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.inflight--
	if u := time.Now().Add(ttl); u.After(g.until) {
		g.until = u
	}
}

func (g *landing) open(now time.Time) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.inflight > 0 || now.Before(g.until)
}

// bound is the end of the leases the refreshes answered may have set
// (zero: none); one in flight keeps the lock reported through open.
func (g *landing) bound() time.Time {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.until
}
