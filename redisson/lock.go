package redisson

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

// Lock is one hold of a Redisson lock by an Owner, as returned (behind
// lockbridge.Lock) by TryLock and Lock: assert lk.(*redisson.Lock) for
// Owner and Fence (the owner's HoldCount counts its holds). An owner that takes a lock n times has n
// Lock values, each unlocked once. Its methods are safe for concurrent use,
// and safe on a nil *Lock (which reports ErrNotHeld).
type Lock struct {
	owner *Owner
	names names
	fence int64  // WithFencing: the token counter's value for this acquire
	gen   uint64 // the owner's generation of the field this hold counted in (Owner.add)
	lease lease.Lease

	// Under mu, which serialises Unlock and Refresh:
	mu       sync.Mutex
	released bool      // Unlock ran its script to an answer
	reqID    string    // the unlock request id, once an Unlock was sent
	reqSent  time.Time // when the first Unlock with reqID was sent
	unknown  error     // the answer to every later Unlock once the latch was found gone
}

// Key returns the lock's name.
func (lk *Lock) Key() string { return lk.state().names.key }

// Token returns the owner's field, "<client id>:<owner id>": what this
// holder wrote (holds of one owner share it).
func (lk *Lock) Token() string { return lk.Owner().Field() }

// Fence returns the token this acquire got with WithFencing (Java's
// lockAndGetToken): strictly greater than every token handed out before on
// the lock's name; 0 without fencing.
func (lk *Lock) Fence() int64 { return lk.state().fence }

// Owner returns the owner of the hold (nil for a nil Lock).
func (lk *Lock) Owner() *Owner { return lk.state().owner }

// ExpiresAt is this holder's view of the end of the lease: when the last
// successful acquire or renewal was sent, plus its ttl.
func (lk *Lock) ExpiresAt() time.Time { return lk.state().lease.ExpiresAt() }

// Done is closed once the hold is unlocked or known lost: its field found
// gone by Refresh or the watchdog, or at the give-up point, a twelfth of
// the lease before ExpiresAt, with or without the watchdog.
func (lk *Lock) Done() <-chan struct{} { return lk.state().lease.Done() }

// Err is nil while the hold lasts and after a clean Unlock. Once the lock
// is known lost — or an Unlock failed — it wraps lockbridge.ErrLost and the
// cause (a *lockbridge.NotHeldError, or the Redis error).
func (lk *Lock) Err() error { return lk.state().lease.Err() }

// state returns lk, or for a nil *Lock a Lock that ended with errNilLock
// (so the accessors need no nil case of their own).
func (lk *Lock) state() *Lock {
	if lk != nil {
		return lk
	}
	nl := &Lock{}
	nl.lease.Init("redisson", time.Time{}, 0)
	nl.lease.End(errNilLock)
	return nl
}

// valid checks a call's receiver and context.
func (lk *Lock) valid(ctx context.Context) error {
	switch {
	case lk == nil:
		return fmt.Errorf("redisson: %w: nil lock: %w", lockbridge.ErrInvalid, lockbridge.ErrNotHeld)
	case lk.owner == nil || lk.owner.l == nil:
		return errZeroLock
	}
	return check.Context("redisson", ctx)
}

// Unlock releases this hold with Redisson's unlock: the owner's count goes
// down by one; at zero the key is deleted and "0" published on the lock's
// channel, waking Go and Java waiters; above zero the lease is set again
// (the owner's other holds go on). It first stops this hold's watchdog, so
// no renewal is sent after it. When the owner's field is gone (the lease
// ran out, or a ForceUnlock) it returns a *lockbridge.NotHeldError and the
// hold counts as lost; a second Unlock returns an error wrapping ErrNotHeld
// without asking Redis. So does an Unlock of a hold already known lost (Done
// closed by the watchdog or Refresh), or one whose lease ran out by our
// clock after which the owner took the lock again while none of its holds'
// leases ran: the owner's field may by then be a new hold's, which that
// unlock would release. An Unlock waits for an attempt of the same owner on
// the lock under way (one round trip).
//
// Each Unlock call sends the unlock once. When its reply is lost, the
// error wraps lockbridge.ErrUnknownOutcome and the hold ends locally (Done
// closes, Err wraps ErrLost). Calling Unlock again sends the same unlock
// request, marked as sent again: the unlock latch the first run left makes
// the server answer with that run's result, so a hold is never released
// twice. When the latch is gone (it expired, or was evicted under memory
// pressure) the server changes nothing and the answer stays unknown: an
// error wrapping ErrUnknownOutcome, to this call and every later one, and a
// count the first run may have left ends with the lease (after the owner's
// last known hold is unlocked). The second call must come within half the
// latch's life (20 s) of the first; later, it refuses at once
// with an error wrapping ErrUnknownOutcome.
func (lk *Lock) Unlock(ctx context.Context) error {
	if err := lk.valid(ctx); err != nil {
		if lk == nil {
			return errNilLock // not held, rather than invalid
		}
		return err
	}
	lk.mu.Lock()
	defer lk.mu.Unlock()
	return lk.unlock(ctx)
}

// unlock is Unlock, under mu: it refuses what must send nothing, sends the
// release once (asking with the same request id again after a lost reply),
// and judges its reply.
func (lk *Lock) unlock(ctx context.Context) error {
	if lk.unknown != nil {
		return lk.unknown
	}
	if lk.released {
		return &lockbridge.NotHeldError{Pkg: "redisson", Key: lk.names.key, Reason: lockbridge.ReasonEnded,
			Detail: "unlocked"}
	}
	// No attempt of the owner on the lock runs while we look and send: an
	// acquire under way could be making the field anew.
	end, err := lk.owner.attempt(ctx, lk.names.key)
	if err != nil {
		return fmt.Errorf("redisson: unlock of %q: nothing sent: %w", lk.names.key, err)
	}
	defer end()
	lk.lease.StopRefresh() // no renewal after this
	if err := lk.sendNothing(); err != nil {
		return err
	}
	l := lk.owner.l
	window := l.cfg.latch / 2
	// Redisson's fair release replies 1 both when it released and when the
	// key was already gone (it then wakes the queue head, which the release
	// is still sent for). A look first (a read) tells the two apart.
	gone := false
	if l.cfg.fair && lk.reqID == "" {
		h, err := l.c.Do(ctx, "HEXISTS", lk.names.key, lk.owner.field)
		gone = err == nil && h == int64(0)
	}
	again := lk.reqID != ""
	if err := lk.request(window); err != nil {
		return err
	}
	rest := max(lk.lease.TTL(), lk.owner.keep(lk.names.key, lk)) // a partial unlock sets the lock's lease to this
	r, err := l.release(ctx, &lk.names, lk.owner.field, rest, lk.reqID, again)
	if err != nil {
		if errors.Is(err, lockbridge.ErrUnknownOutcome) {
			lk.owner.unsure(lk.names.key, rest)
			lk.owner.doubt(lk.names.key)
			if !again {
				lk.owner.releaseUnknown(lk.names.key, 1) // settled only by the latch's answer
			}
		}
		lk.lease.Lose(fmt.Errorf("unlock failed: %w", err))
		if errors.Is(err, lockbridge.ErrUnknownOutcome) {
			return fmt.Errorf("redisson: unlock of %q (call Unlock again within %v to learn the outcome): %w",
				lk.names.key, window, err)
		}
		return fmt.Errorf("redisson: unlock of %q: %w", lk.names.key, err)
	}
	return lk.judgeRelease(ctx, r, again, gone)
}

// sendNothing returns the error of an unlock that must send nothing, the
// hold then ending: one known lost before any unlock was sent, or whose
// lease ran out by our clock after the owner took the lock again. Nil when
// the unlock may be sent.
func (lk *Lock) sendNothing() error {
	if lk.reqID == "" && lk.lease.Ended() && (lk.owner.l.cfg.watchdog || !lk.lease.RanOut()) {
		// Known lost (its field found gone, or not renewed in time by the
		// watchdog) before any unlock was sent: its count may have left
		// the hash with the field, and a count there now may be a new hold
		// of the same owner. Taking it would release that hold. Send
		// nothing; a count of ours still there ends with the lease. (The
		// lease of a hold without watchdog that ran out by our clock is
		// judged by the check below, as before it had a timer.)
		lk.released = true
		lk.owner.remove(lk)
		lk.owner.doubt(lk.names.key)
		return &lockbridge.NotHeldError{Pkg: "redisson", Key: lk.names.key, Reason: lockbridge.ReasonEnded,
			Detail: "the hold was lost before Unlock: " + lk.lease.Err().Error()}
	}
	if !time.Now().Before(lk.lease.ExpiresAt()) && lk.owner.renewedSince(lk.names.key, lk.gen) {
		// The lease ran out by our clock, and the owner has since taken the
		// lock while none of its holds' leases ran: the field may be that
		// new hold's, which this unlock (or a retry of one whose first run
		// found no field, and so left no latch) would release. Send
		// nothing; a count of ours still there ends with the lease.
		lk.released = true
		lk.owner.remove(lk)
		lk.owner.doubt(lk.names.key)
		nh := &lockbridge.NotHeldError{Pkg: "redisson", Key: lk.names.key, Reason: lockbridge.ReasonExpired,
			Detail: "the lease ran out and the owner has taken the lock again since: the field may be that hold's"}
		lk.lease.Lose(nh)
		return nh
	}
	return nil
}

// judgeRelease judges the release's reply r (again: it asked a second time;
// gone: the fair lock's field was found gone before): the hold ends, held
// to the end or not held; the latch is deleted once its answer is known.
func (lk *Lock) judgeRelease(ctx context.Context, r any, again, gone bool) error {
	l := lk.owner.l
	if again && r == int64(releaseLatchGone) {
		// The latch is gone: the first run may or may not have happened,
		// and the script did nothing now. Never ask again.
		lk.released = true
		lk.owner.remove(lk)
		lk.owner.doubt(lk.names.key) // the first run may still come, or have left the count
		lk.unknown = fmt.Errorf("redisson: unlock of %q: %w: the first unlock's answer (its latch) is gone, "+
			"so whether it ran is not known; nothing was released by asking again, and a hold it left ends "+
			"with the lease", lk.names.key, lockbridge.ErrUnknownOutcome)
		return lk.unknown
	}
	if r != nil && r != int64(releaseKept) && r != int64(releaseDone) {
		err := unexpected("release", r)
		lk.lease.Lose(err)
		return err
	}
	if again && r != nil {
		lk.owner.releaseUnknown(lk.names.key, -1) // the latch shows the first run ran: it is in flight no more
	}
	lk.released = true
	lk.owner.remove(lk)
	if r == int64(releaseKept) {
		// A count stays: another hold's — or one no hold knows of, which
		// lives on with the lease this unlock set.
		lk.owner.doubt(lk.names.key)
	}
	var nh *lockbridge.NotHeldError
	switch {
	case r == nil || gone:
		nh = &lockbridge.NotHeldError{Pkg: "redisson", Key: lk.names.key, Reason: lockbridge.ReasonGone,
			Detail: "the owner's field is not in the hash"}
	case l.cfg.fair && r == int64(releaseDone) && !time.Now().Before(lk.lease.ExpiresAt()):
		// The key may have gone with the lease before the release ran.
		nh = &lockbridge.NotHeldError{Pkg: "redisson", Key: lk.names.key, Reason: lockbridge.ReasonExpired,
			Detail: "the lease ran out before the unlock"}
	}
	if nh != nil {
		lk.lease.Lose(nh)
		if r != nil {
			_, _ = l.c.Do(ctx, "DEL", lk.names.latch+":"+lk.reqID)
		}
		return nh
	}
	lk.lease.End(nil)
	// Redisson 4.x deletes the latch once it has the reply (3.x leaves it
	// to expire); so do we (best effort: it expires by itself).
	_, _ = l.c.Do(ctx, "DEL", lk.names.latch+":"+lk.reqID)
	return nil
}

// request sets the unlock request id on the first Unlock, and refuses a
// later one (asking again after a lost reply) past window.
func (lk *Lock) request(window time.Duration) error {
	if lk.reqID != "" {
		if since := time.Since(lk.reqSent); since > window {
			return fmt.Errorf("redisson: unlock of %q: %w: the first unlock was sent %v ago, past half the latch's life "+
				"(%v): the latch that holds its answer may be gone",
				lk.names.key, lockbridge.ErrUnknownOutcome, since.Round(time.Millisecond), window)
		}
		return nil
	}
	id, err := newRequestID()
	lk.reqID, lk.reqSent = id, time.Now()
	return err
}

// Refresh sets the whole lock's lease to ttl from now (at least 1 ms; longer
// while another hold of the owner has longer to run) if
// the owner's field is still in the hash, with the watchdog's script; later
// renewals and the lease an Unlock of a hold sets use the new ttl. When the
// field is gone it returns a *lockbridge.NotHeldError and the hold counts as
// lost. A reply that never came is returned as it is (wrapping
// lockbridge.ErrUnknownOutcome): nothing is sent again.
func (lk *Lock) Refresh(ctx context.Context, ttl time.Duration) error {
	if err := lk.valid(ctx); err != nil {
		return err
	}
	if err := check.TTL("redisson", ttl, time.Millisecond); err != nil {
		return err
	}
	lk.mu.Lock()
	defer lk.mu.Unlock()
	if lk.released || lk.lease.Ended() {
		return &lockbridge.NotHeldError{Pkg: "redisson", Key: lk.names.key, Reason: lockbridge.ReasonEnded}
	}
	return lk.renew(ctx, ttl.Truncate(time.Millisecond))
}

// watchdog is the lease's refresh function: renew with the current ttl.
func (lk *Lock) watchdog(ctx context.Context) error { return lk.renew(ctx, 0) }

// renew runs the renewal script and records the outcome in the lease. ttl
// 0 means the lease's current ttl: the watchdog's round, which never waits
// behind a Refresh by hand (lease.Rounds). The lease is shortened before
// the send (lease.Sending): a shorter ttl may take effect whether or not
// the reply comes.
func (lk *Lock) renew(ctx context.Context, ttl time.Duration) error {
	// Every write that sets the lock's lease — an attempt, a renewal, an
	// unlock of a hold — is one of the owner's turns on the key, so that
	// each computes the lease it sends from its holds' settled leases. The
	// watchdog never waits for one: it skips its turn.
	key := lk.names.key
	var end func()
	if ttl == 0 {
		var ok bool
		if end, ok = lk.owner.tryAttempt(key); !ok {
			return lease.ErrRoundInFlight
		}
		ttl = lk.lease.TTL()
	} else {
		var err error
		if end, err = lk.owner.attempt(ctx, key); err != nil {
			return fmt.Errorf("redisson: renewal of %q: nothing sent: %w", key, err)
		}
	}
	defer end()
	send := max(ttl, lk.owner.keep(key, lk)) // the whole lock's lease: never below another hold's
	start := time.Now()                      // after keep: start+send covers every hold's lease
	lk.lease.Sending(start, ttl)
	a := renewArgs{key: key, lease: send, field: lk.owner.field}
	r, err := lk.owner.l.c.Eval(ctx, renewScript, a.keys(), a.argv()...)
	if err != nil {
		if errors.Is(err, lockbridge.ErrUnknownOutcome) {
			lk.owner.unsure(key, send)
		}
		return fmt.Errorf("redisson: renewal of %q: %w", key, err)
	}
	if r != int64(renewGone) && r != int64(renewed) {
		return unexpected("renew", r)
	}
	if r == int64(renewed) {
		return lk.lease.Extend(start.Add(ttl), ttl)
	}
	nh := &lockbridge.NotHeldError{Pkg: "redisson", Key: lk.names.key, Reason: lockbridge.ReasonGone,
		Detail: "the owner's field is not in the hash"}
	lk.lease.Lose(nh)
	return nh
}
