package legacy

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/internal/protocol/legacyproto"
	"github.com/lockbridge/lockbridge/internal/runtime/check"
	"github.com/lockbridge/lockbridge/internal/runtime/lease"
)

// Lock is a held legacy lock: the expiry W this holder wrote, in the
// profile's codec. Its methods are safe for concurrent use, and on a nil
// *Lock: Unlock and Refresh then return an error wrapping
// lockbridge.ErrNotHeld, Done a closed channel, Err that same error.
//
// A legacy lock is not refreshed automatically (the Java side never is):
// Done is closed by Unlock, by an Unlock or Refresh that finds the lock no
// longer ours, or at the end of its lease by the local clock minus the
// margin (lease/12) — Err then wraps lockbridge.ErrLost and says the lease
// ran out.
type Lock struct {
	locker *Locker
	key    string // the caller's name
	ekey   string // the Redis key

	op sync.Mutex // serialises Unlock and Refresh

	// Guarded by op: the scripts' KEYS ({ekey}) and a buffer for their
	// ARGV, so that a release or refresh builds no slice of its own.
	keys [1]string
	args [8]any

	mu    sync.Mutex // guards what follows
	w     int64      // our expiry, in the unit
	value string     // the bytes we wrote
	lease time.Duration

	// released: Unlock reached a verdict (guarded by op).
	released bool

	// life is the lock's end: Done, Err, ended, and the give-up timer at
	// W by our clock minus the margin (the other lockers take over once
	// their clocks pass W).
	life lease.Lease
}

var _ lockbridge.Lock = (*Lock)(nil)

// errNilLock is what the methods of a nil *Lock report.
var errNilLock = fmt.Errorf("%s: nil lock: %w", pkg, lockbridge.ErrNotHeld)

// errNilLockCall is what Refresh of a nil *Lock reports: a bad argument,
// and not held either.
var errNilLockCall = fmt.Errorf("%s: %w: nil lock: %w", pkg, lockbridge.ErrInvalid, lockbridge.ErrNotHeld)

// valid checks a call's receiver and context: a nil or zero Lock (not from
// a Locker), or a nil ctx, is an error wrapping lockbridge.ErrInvalid.
func (lk *Lock) valid(ctx context.Context) error {
	switch {
	case lk == nil:
		return errNilLockCall
	case lk.locker == nil:
		return fmt.Errorf("%s: %w: zero Lock (locks come from a Locker)", pkg, lockbridge.ErrInvalid)
	}
	return check.Context(pkg, ctx)
}

// Key returns the lock name the caller gave (not the Redis key the key codec
// encodes it to).
func (lk *Lock) Key() string {
	if lk == nil {
		return ""
	}
	return lk.key
}

// Token returns the expiry W this holder wrote, as ASCII decimal in the
// profile's unit (e.g. "1700000000001"), whatever the value codec.
func (lk *Lock) Token() string {
	if lk == nil {
		return ""
	}
	return strconv.FormatInt(lk.expiry(), 10)
}

// Value returns the exact bytes this holder wrote: W in the value codec.
func (lk *Lock) Value() string {
	if lk == nil {
		return ""
	}
	_, v, _ := lk.state()
	return v
}

// ExpiresAt returns W as a time: the lease ends once the clocks of the
// other lockers pass it (the lock stays live while their now ≤ W).
func (lk *Lock) ExpiresAt() time.Time {
	if lk == nil {
		return time.Time{}
	}
	return lk.locker.profile.TimeOf(lk.expiry())
}

// Done is closed once the lock is released by Unlock, found no longer ours
// by an Unlock or Refresh, or its lease runs out by the local clock: at W
// minus the margin (a twelfth of the lease), whatever is in flight.
func (lk *Lock) Done() <-chan struct{} {
	if lk == nil {
		return lease.Closed()
	}
	return lk.life.Done()
}

// Err is nil while the lock is held and after a clean Unlock; once an Unlock
// or Refresh found the lock no longer ours, or its lease ran out, it wraps
// lockbridge.ErrLost.
func (lk *Lock) Err() error {
	if lk == nil {
		return errNilLock
	}
	return lk.life.Err()
}

// Unlock releases the lock. In the atomic mode it deletes the key only if it
// still holds our value, within the owner window (a losing contender's
// GETSET may have replaced W by a nearby value), and only while the local
// clock says W has not passed (now < W, the Java seed's condition) — the
// server's clock may only refuse, once it is past W by more than the margin
// (WithServerClockMargin); in the classic mode it deletes it, as the Java seed
// does, while the local clock says W has not passed. When the lock is
// no longer ours the error wraps lockbridge.ErrNotHeld and Err then wraps
// lockbridge.ErrLost. An error reply from Redis (the script did not run) is
// returned as it is and leaves the lock held, so Unlock may be called again.
// Any other error — a timeout, a cancelled context, a broken connection —
// leaves it unknown whether the release happened; a second release could
// then meet a successor's lock, so the lock ends (Err wraps
// lockbridge.ErrLost and the cause) and is left to expire by itself if the
// release did not land.
func (lk *Lock) Unlock(ctx context.Context) error {
	if lk == nil {
		return errNilLock
	}
	if err := lk.valid(ctx); err != nil {
		return err
	}
	lk.op.Lock()
	defer lk.op.Unlock()
	if lk.released || !lk.life.RanOut() { // a lease that ran out is released under the scripts' checks
		if err := lk.checkEnded("unlock"); err != nil {
			return err
		}
	}
	var (
		code int64
		err  error
	)
	if lk.locker.mode == legacyproto.ModeClassic {
		code, err = lk.releaseClassic(ctx)
	} else {
		code, err = lk.releaseAtomic(ctx)
	}
	if err != nil {
		lk.uncertain("unlock", err)
		return err
	}
	lk.released = true
	if code == ownerOurs {
		lk.end(nil)
		return nil
	}
	return lk.lost("unlock", code)
}

// Refresh extends the lease to ttl from now (by the profile's clock): it
// rewrites our value with the new expiry, under the same condition as
// Unlock (in the classic mode: the local clock, then GET and GETSET). The ttl
// must be at least one unit and at most half the safety TTL, else the error
// wraps lockbridge.ErrInvalid. When the lock is no longer ours the error
// wraps lockbridge.ErrNotHeld and Err then wraps lockbridge.ErrLost.
func (lk *Lock) Refresh(ctx context.Context, ttl time.Duration) error {
	if err := lk.valid(ctx); err != nil {
		return err
	}
	if err := lk.locker.checkTTL(ttl); err != nil {
		return err
	}
	lk.op.Lock()
	defer lk.op.Unlock()
	if err := lk.checkEnded("refresh"); err != nil {
		return err
	}
	p := lk.locker.profile
	start, now := time.Now(), p.Now()
	nw := p.Expiry(now, ttl)
	nvalue := p.EncodeValue(nw)
	local := lk.locker.localTTL(nw, now)
	lk.life.Sending(start, local) // a shorter lease may take effect, reply or not
	var (
		code int64
		err  error
	)
	if lk.locker.mode == legacyproto.ModeClassic {
		code, err = lk.refreshClassic(ctx, nvalue)
	} else {
		code, err = lk.refreshAtomic(ctx, nvalue)
	}
	if err != nil {
		lk.uncertain("refresh", err)
		return err
	}
	if code != ownerOurs {
		return lk.lost("refresh", code)
	}
	lk.mu.Lock()
	lk.w, lk.value, lk.lease = nw, nvalue, ttl
	lk.mu.Unlock()
	return lk.life.Extend(start.Add(local), local)
}

func (lk *Lock) state() (w int64, value string, lease time.Duration) {
	lk.mu.Lock()
	defer lk.mu.Unlock()
	return lk.w, lk.value, lk.lease
}

func (lk *Lock) expiry() int64 {
	lk.mu.Lock()
	defer lk.mu.Unlock()
	return lk.w
}

// checkEnded returns the error of an operation on a lock already released or lost.
func (lk *Lock) checkEnded(op string) error {
	switch {
	case !lk.life.Ended():
		return nil
	case lk.life.Err() == nil:
		return fmt.Errorf("%s: %s: %w", pkg, op, &lockbridge.NotHeldError{Pkg: pkg, Key: lk.key,
			Reason: lockbridge.ReasonEnded, Detail: "released"})
	}
	return fmt.Errorf("%s: %s: %w", pkg, op, &lockbridge.NotHeldError{Pkg: pkg, Key: lk.key,
		Reason: lockbridge.ReasonEnded, Detail: "lost"})
}

// uncertain ends the lock after an error that leaves it unknown whether the
// operation reached Redis: anything but an error reply. Repeating a release
// or refresh then could act on a successor's lock, as the owner window
// assumes our value (or a loser's near it) is still there.
func (lk *Lock) uncertain(op string, err error) {
	var re driver.ReplyError
	if errors.As(err, &re) {
		return // the script did not run: the lock is as it was
	}
	lk.end(fmt.Errorf("%s: lock %q: %s may or may not have happened: %w: %w", pkg, lk.key, op, lockbridge.ErrLost, err))
}

// end closes Done with err (nil for a clean release).
func (lk *Lock) end(err error) { lk.life.End(err) }

// lost ends the lock as lost for the reason code (legacy_owner's) and
// returns op's error: a *lockbridge.NotHeldError, which Err's error wraps
// too.
func (lk *Lock) lost(op string, code int64) error {
	nh := &lockbridge.NotHeldError{Pkg: pkg, Key: lk.key}
	w := lk.expiry()
	switch code {
	case ownerTaken:
		nh.Reason, nh.Detail = lockbridge.ReasonTaken, "the key holds another holder's value"
	case ownerGone:
		nh.Reason, nh.Detail = lockbridge.ReasonGone, "the key is gone"
	case ownerLate:
		nh.Reason, nh.Detail = lockbridge.ReasonExpired, fmt.Sprintf("the lease ended at %s (%d) more than %v ago by "+
			"the server's clock: the command reached Redis late",
			lk.locker.profile.TimeOf(w).UTC().Format(time.RFC3339Nano), w, lk.locker.profile.ServerClockMargin())
	default:
		nh.Reason, nh.Detail = lockbridge.ReasonExpired, fmt.Sprintf("the lease ended at %s (%d) by the local clock",
			lk.locker.profile.TimeOf(w).UTC().Format(time.RFC3339Nano), w)
	}
	lk.end(fmt.Errorf("%s: lock %q lost: %w: %w", pkg, lk.key, lockbridge.ErrLost, nh))
	return fmt.Errorf("%s: %s: %w", pkg, op, nh)
}
