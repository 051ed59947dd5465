package modern

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/internal/runtime/check"
	"github.com/lockbridge/lockbridge/internal/runtime/lease"
)

var _ lockbridge.Lock = (*Lock)(nil)

// Lock is one held modern lock, as returned (behind lockbridge.Lock) by
// Locker.TryLock and Locker.Lock: assert lk.(*modern.Lock) for Fence and
// TTL. Its methods are safe for concurrent use, and safe on a nil *Lock
// (which reports ErrNotHeld).
type Lock struct {
	locker *Locker
	names  names
	token  string
	arg    any // token, boxed once for the scripts' ARGV
	fence  int64
	lease  lease.Lease

	mu       sync.Mutex   // serialises Unlock and Refresh
	rounds   lease.Rounds // serialises refresh rounds: Refresh and the auto-refresh
	released atomic.Bool  // Unlock ran its script to an answer
}

// Key returns the key the caller named.
func (lk *Lock) Key() string { return lease.Field(lk, func(l *Lock) string { return l.names.Key }) }

// Token returns the value this holder wrote to the key (printable: base64url
// unless a WithTokenFunc says otherwise).
func (lk *Lock) Token() string { return lease.Field(lk, func(l *Lock) string { return l.token }) }

// Fence returns the fencing token of this holder: with WithFencing, the
// value of the key's fence counter after this acquire, strictly greater than
// every earlier holder's; 0 without fencing.
func (lk *Lock) Fence() int64 { return lease.Field(lk, func(l *Lock) int64 { return l.fence }) }

// ExpiresAt is this holder's view of the end of the lease: when the last
// successful acquire or refresh was sent, plus its ttl. The server's lease
// ends a little later (by the time the command took to arrive).
func (lk *Lock) ExpiresAt() time.Time { return lk.life().ExpiresAt() }

// Done is closed once the lock is released by Unlock or known lost: found
// gone or taken by a Refresh, TTL or the auto-refresh, or at the give-up
// point, ttl/12 before ExpiresAt, with or without auto-refresh, whatever is
// in flight.
func (lk *Lock) Done() <-chan struct{} { return lk.life().Done() }

// life is the lock's lease; nil for a nil Lock.
func (lk *Lock) life() *lease.Lease {
	return lease.Field(lk, func(l *Lock) *lease.Lease { return &l.lease })
}

// Err is nil while the lock is held and after a clean Unlock. Once the lock
// is known lost — or an Unlock failed — it returns an error wrapping
// lockbridge.ErrLost and the cause (a *lockbridge.NotHeldError when Redis said the lock
// is gone or taken, else the Redis error).
func (lk *Lock) Err() error { return lk.life().ErrOr(errNilLock) }

// valid checks a call's receiver and context: a nil Lock is nilLock (an
// error wrapping lockbridge.ErrInvalid, but ErrNotHeld for Unlock); a zero
// Lock, or a nil ctx, an error wrapping lockbridge.ErrInvalid.
func (lk *Lock) valid(ctx context.Context, nilLock error) error {
	switch {
	case lk == nil:
		return nilLock
	case lk.locker == nil:
		return errZeroLock
	}
	return check.Context("modern", ctx)
}

// Unlock releases the lock if it is still ours, and publishes the release
// so that waiters wake; this Locker's next waiter on the key is woken
// directly. It first stops the auto-refresh and waits for it, so
// no refresh is sent after Unlock. When the lock was no longer ours it
// returns a *lockbridge.NotHeldError (wrapping lockbridge.ErrNotHeld) saying whether it
// expired or was taken; a second Unlock returns an error wrapping ErrNotHeld
// without asking Redis.
//
// When the release was sent and its reply never came, Unlock returns a
// *lease.UnknownReleaseError wrapping lockbridge.ErrUnknownOutcome: the
// release may or may not have happened, and it is never sent again (a
// second Unlock returns an error wrapping ErrNotHeld). The lock ends
// locally all the same (Done is closed, Err wraps ErrLost); a key the
// release did not reach expires by itself at the end of its lease. When
// Redis fails otherwise (nothing was sent), Unlock returns that error, the
// lock ends locally, and calling Unlock again retries the release.
func (lk *Lock) Unlock(ctx context.Context) error {
	if err := lk.valid(ctx, errNilLock); err != nil {
		return err
	}
	lk.mu.Lock()
	defer lk.mu.Unlock()
	if lk.released.Load() {
		return lk.errReleased()
	}
	// Whatever the outcome, this Locker's next waiter on the key tries now.
	defer lk.locker.waiters.Wake(lk.names.Key)
	lk.lease.StopRefresh()
	code, err := lk.locker.node.Release(ctx, &lk.names, lk.arg)
	if errors.Is(err, lockbridge.ErrUnknownOutcome) {
		// The release may have run: it is never sent again (no resends),
		// nor by a later Unlock. If it did not run, the key expires at its
		// lease.
		err = lease.UnansweredRelease("modern", lk.names.Key, err)
		lk.released.Store(true)
	}
	if err != nil {
		lk.lease.Lose(fmt.Errorf("unlock failed: %w", err))
		return err
	}
	lk.released.Store(true)
	if code == codeOurs {
		lk.lease.End(nil)
		return nil
	}
	return lk.lost(code)
}

// lost records that Redis found the lock no longer ours (code) and returns
// the error saying so. This Locker's next waiter on the key is woken: the
// key may be free.
func (lk *Lock) lost(code int64) *lockbridge.NotHeldError {
	nh := notHeld(lk.names.Key, code)
	lk.lease.Lose(nh)
	lk.locker.waiters.Wake(lk.names.Key)
	return nh
}

// TTL returns the lock's remaining lease as the server counts it, if the
// lock is still ours (negative if someone removed the key's expiry);
// otherwise a *lockbridge.NotHeldError, and the lock counts as lost (Done closes).
func (lk *Lock) TTL(ctx context.Context) (time.Duration, error) {
	if err := lk.valid(ctx, errNilLockCall); err != nil {
		return 0, err
	}
	if lk.released.Load() {
		return 0, lk.errReleased()
	}
	code, ms, err := lk.locker.node.PTTL(ctx, &lk.names, lk.arg)
	if err != nil {
		return 0, err
	}
	if code != codeOurs {
		return 0, lk.lost(code)
	}
	return time.Duration(ms) * time.Millisecond, nil
}
