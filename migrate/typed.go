package migrate

import (
	"context"
	"fmt"
	"time"

	"github.com/lockbridge/lockbridge"
)

// Lock is a lock a Locker took: the lock of its phase — legacy, dual-write,
// dual-read or modern — with the phase it was taken in and its fence. A
// Locker's TryLock and Lock return a *Lock (as a lockbridge.Lock);
// lockbridge.Typed[*migrate.Lock] gets it without a type assertion.
type Lock struct {
	impl  lockbridge.Lock
	phase Phase
}

var _ lockbridge.Lock = (*Lock)(nil)

// typed wraps the lock an attempt in phase p took.
func typed(lk lockbridge.Lock, p Phase) *Lock { return &Lock{impl: lk, phase: p} }

// Phase returns the phase the lock was taken in (0 for a nil Lock).
func (lk *Lock) Phase() Phase {
	if lk == nil {
		return 0
	}
	return lk.phase
}

// get is the lock inside, or for a nil or zero Lock one whose calls fail.
func (lk *Lock) get() lockbridge.Lock {
	if lk == nil || lk.impl == nil {
		return nilLock{}
	}
	return lk.impl
}

// nilLock stands in for a nil *Lock: Unlock and Refresh fail with an error
// wrapping lockbridge.ErrNotHeld and lockbridge.ErrInvalid, Done is closed,
// Err returns that error.
type nilLock struct{}

var errNilLock = fmt.Errorf("%s: %w: nil lock: %w", pkg, lockbridge.ErrInvalid, lockbridge.ErrNotHeld)

func (nilLock) Key() string                                  { return "" }
func (nilLock) Token() string                                { return "" }
func (nilLock) ExpiresAt() time.Time                         { return time.Time{} }
func (nilLock) Refresh(context.Context, time.Duration) error { return errNilLock }
func (nilLock) Unlock(context.Context) error                 { return errNilLock }
func (nilLock) Done() <-chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}
func (nilLock) Err() error { return errNilLock }

// Fence returns the lock's fence when it was taken with fencing
// (modern.WithFencing through WithModern) in a phase that writes the modern
// key, and 0 otherwise.
func (lk *Lock) Fence() int64 {
	if f, ok := lk.get().(interface{ Fence() int64 }); ok {
		return f.Fence()
	}
	return 0
}

// Key is the lock's name, as the caller gave it.
func (lk *Lock) Key() string { return lk.get().Key() }

// Token is what this holder wrote: the modern token, or in the legacy
// phase the legacy value.
func (lk *Lock) Token() string { return lk.get().Token() }

// ExpiresAt is this holder's view of the end of the lease.
func (lk *Lock) ExpiresAt() time.Time { return lk.get().ExpiresAt() }

// Refresh extends the lease to ttl from now, in the phase the lock was
// taken in (see the package documentation).
func (lk *Lock) Refresh(ctx context.Context, ttl time.Duration) error {
	return lk.get().Refresh(ctx, ttl)
}

// Unlock releases the lock.
func (lk *Lock) Unlock(ctx context.Context) error { return lk.get().Unlock(ctx) }

// Done is closed once the lock is released or known lost — also when its
// Locker moved to a phase that does not exclude it.
func (lk *Lock) Done() <-chan struct{} { return lk.get().Done() }

// Err is nil while held and after a clean Unlock; otherwise it wraps
// lockbridge.ErrLost.
func (lk *Lock) Err() error { return lk.get().Err() }
