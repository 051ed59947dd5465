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
	lk   *Locker
	key  string // the caller's name
	ekey string // the Redis key

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
func (l *Lock) valid(ctx context.Context) error {
	switch {
	case l == nil:
		return errNilLockCall
	case l.lk == nil:
		return fmt.Errorf("%s: %w: zero Lock (locks come from a Locker)", pkg, lockbridge.ErrInvalid)
	}
	return check.Context(pkg, ctx)
}

// Key returns the lock name the caller gave (not the encoded Redis key: see
// RedisKey).
func (l *Lock) Key() string {
	if l == nil {
		return ""
	}
	return l.key
}

// RedisKey returns the Redis key, as the profile's key codec encoded the name.
func (l *Lock) RedisKey() string {
	if l == nil {
		return ""
	}
	return l.ekey
}

// Token returns the expiry this holder wrote, as ASCII decimal in the
// profile's unit (e.g. "1700000000001"), whatever the value codec.
func (l *Lock) Token() string {
	if l == nil {
		return ""
	}
	return strconv.FormatInt(l.expiry(), 10)
}

// Expiry returns the expiry W this holder wrote, in the profile's unit.
func (l *Lock) Expiry() int64 {
	if l == nil {
		return 0
	}
	return l.expiry()
}

// Value returns the exact bytes this holder wrote: W in the value codec.
func (l *Lock) Value() string {
	if l == nil {
		return ""
	}
	_, v, _ := l.state()
	return v
}

// ExpiresAt returns W as a time: the lease ends once the clocks of the
// other lockers pass it (the lock stays live while their now ≤ W).
func (l *Lock) ExpiresAt() time.Time {
	if l == nil {
		return time.Time{}
	}
	return l.lk.profile.TimeOf(l.expiry())
}

// Done is closed once the lock is released by Unlock, found no longer ours
// by an Unlock or Refresh, or its lease runs out by the local clock: at W
// minus the margin (a twelfth of the lease), whatever is in flight.
func (l *Lock) Done() <-chan struct{} {
	if l == nil {
		return lease.Closed()
	}
	return l.life.Done()
}

// Err is nil while the lock is held and after a clean Unlock; once an Unlock
// or Refresh found the lock no longer ours, or its lease ran out, it wraps
// lockbridge.ErrLost.
func (l *Lock) Err() error {
	if l == nil {
		return errNilLock
	}
	return l.life.Err()
}

// Unlock releases the lock. In ModeAtomic it deletes the key only if it
// still holds our value, within the owner window (a losing contender's
// GETSET may have replaced W by a nearby value), and only while the local
// clock says W has not passed (now < W, the Java seed's condition) — the
// server's clock may only refuse, once it is past W by more than the margin
// (WithServerClockMargin); in ModeClassic it deletes it, as the Java seed
// does, while the local clock says W has not passed. When the lock is
// no longer ours the error wraps lockbridge.ErrNotHeld and Err then wraps
// lockbridge.ErrLost. An error reply from Redis (the script did not run) is
// returned as it is and leaves the lock held, so Unlock may be called again.
// Any other error — a timeout, a cancelled context, a broken connection —
// leaves it unknown whether the release happened; a second release could
// then meet a successor's lock, so the lock ends (Err wraps
// lockbridge.ErrLost and the cause) and is left to expire by itself if the
// release did not land.
func (l *Lock) Unlock(ctx context.Context) error {
	if l == nil {
		return errNilLock
	}
	if err := l.valid(ctx); err != nil {
		return err
	}
	l.op.Lock()
	defer l.op.Unlock()
	if l.released || !l.life.RanOut() { // a lease that ran out is released under the scripts' checks
		if err := l.checkEnded("unlock"); err != nil {
			return err
		}
	}
	var (
		code int64
		err  error
	)
	if l.lk.mode == ModeClassic {
		code, err = l.releaseClassic(ctx)
	} else {
		code, err = l.releaseAtomic(ctx)
	}
	if err != nil {
		l.uncertain("unlock", err)
		return err
	}
	l.released = true
	if code == ownerOurs {
		l.end(nil)
		return nil
	}
	return l.lost("unlock", code)
}

// Refresh extends the lease to ttl from now (by the profile's clock): it
// rewrites our value with the new expiry, under the same condition as
// Unlock (in ModeClassic: the local clock, then GET and GETSET). The ttl
// must be at least one unit and at most half the safety TTL, else the error
// wraps lockbridge.ErrInvalid. When the lock is no longer ours the error
// wraps lockbridge.ErrNotHeld and Err then wraps lockbridge.ErrLost.
func (l *Lock) Refresh(ctx context.Context, ttl time.Duration) error {
	if err := l.valid(ctx); err != nil {
		return err
	}
	if err := l.lk.checkTTL(ttl); err != nil {
		return err
	}
	l.op.Lock()
	defer l.op.Unlock()
	if err := l.checkEnded("refresh"); err != nil {
		return err
	}
	p := l.lk.profile
	start, now := time.Now(), p.Now()
	nw := p.Expiry(now, ttl)
	nvalue := p.EncodeValue(nw)
	local := l.lk.localTTL(nw, now)
	l.life.Sending(start, local) // a shorter lease may take effect, reply or not
	var (
		code int64
		err  error
	)
	if l.lk.mode == ModeClassic {
		code, err = l.refreshClassic(ctx, nvalue)
	} else {
		code, err = l.refreshAtomic(ctx, nvalue)
	}
	if err != nil {
		l.uncertain("refresh", err)
		return err
	}
	if code != ownerOurs {
		return l.lost("refresh", code)
	}
	l.mu.Lock()
	l.w, l.value, l.lease = nw, nvalue, ttl
	l.mu.Unlock()
	return l.life.Extend(start.Add(local), local)
}

func (l *Lock) state() (w int64, value string, lease time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w, l.value, l.lease
}

func (l *Lock) expiry() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w
}

// checkEnded returns the error of an operation on a lock already released or lost.
func (l *Lock) checkEnded(op string) error {
	switch {
	case !l.life.Ended():
		return nil
	case l.life.Err() == nil:
		return fmt.Errorf("%s: %s: %w", pkg, op, &lockbridge.NotHeldError{Pkg: pkg, Key: l.key, Reason: lockbridge.ReasonEnded, Detail: "released"})
	}
	return fmt.Errorf("%s: %s: %w", pkg, op, &lockbridge.NotHeldError{Pkg: pkg, Key: l.key, Reason: lockbridge.ReasonEnded, Detail: "lost"})
}

// uncertain ends the lock after an error that leaves it unknown whether the
// operation reached Redis: anything but an error reply. Repeating a release
// or refresh then could act on a successor's lock, as the owner window
// assumes our value (or a loser's near it) is still there.
func (l *Lock) uncertain(op string, err error) {
	var re driver.ReplyError
	if errors.As(err, &re) {
		return // the script did not run: the lock is as it was
	}
	l.end(fmt.Errorf("%s: lock %q: %s may or may not have happened: %w: %w", pkg, l.key, op, lockbridge.ErrLost, err))
}

// end closes Done with err (nil for a clean release).
func (l *Lock) end(err error) { l.life.End(err) }

// lost ends the lock as lost for the reason code (legacy_owner's) and
// returns op's error: a *lockbridge.NotHeldError, which Err's error wraps
// too.
func (l *Lock) lost(op string, code int64) error {
	nh := &lockbridge.NotHeldError{Pkg: pkg, Key: l.key}
	w := l.expiry()
	switch code {
	case ownerTaken:
		nh.Reason, nh.Detail = lockbridge.ReasonTaken, "the key holds another holder's value"
	case ownerGone:
		nh.Reason, nh.Detail = lockbridge.ReasonGone, "the key is gone"
	case ownerLate:
		nh.Reason, nh.Detail = lockbridge.ReasonExpired, fmt.Sprintf("the lease ended at %s (%d) more than %v ago by the server's clock: the command reached Redis late",
			l.lk.profile.TimeOf(w).UTC().Format(time.RFC3339Nano), w, l.lk.profile.ServerClockMargin())
	default:
		nh.Reason, nh.Detail = lockbridge.ReasonExpired, fmt.Sprintf("the lease ended at %s (%d) by the local clock", l.lk.profile.TimeOf(w).UTC().Format(time.RFC3339Nano), w)
	}
	l.end(fmt.Errorf("%s: lock %q lost: %w: %w", pkg, l.key, lockbridge.ErrLost, nh))
	return fmt.Errorf("%s: %s: %w", pkg, op, nh)
}
