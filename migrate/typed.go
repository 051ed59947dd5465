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
func (l *Lock) Phase() Phase {
	if l == nil {
		return 0
	}
	return l.phase
}

// get is the lock inside, or for a nil or zero Lock one whose calls fail.
func (l *Lock) get() lockbridge.Lock {
	if l == nil || l.impl == nil {
		return nilLock{}
	}
	return l.impl
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
func (l *Lock) Fence() int64 {
	if f, ok := l.get().(interface{ Fence() int64 }); ok {
		return f.Fence()
	}
	return 0
}

// Key is the lock's name, as the caller gave it.
func (l *Lock) Key() string { return l.get().Key() }

// Token is what this holder wrote: the modern token, or in the legacy
// phase the legacy value.
func (l *Lock) Token() string { return l.get().Token() }

// ExpiresAt is this holder's view of the end of the lease.
func (l *Lock) ExpiresAt() time.Time { return l.get().ExpiresAt() }

// Refresh extends the lease to ttl from now, in the phase the lock was
// taken in (see the package documentation).
func (l *Lock) Refresh(ctx context.Context, ttl time.Duration) error {
	return l.get().Refresh(ctx, ttl)
}

// Unlock releases the lock.
func (l *Lock) Unlock(ctx context.Context) error { return l.get().Unlock(ctx) }

// Done is closed once the lock is released or known lost — also when its
// Locker moved to a phase that does not exclude it.
func (l *Lock) Done() <-chan struct{} { return l.get().Done() }

// Err is nil while held and after a clean Unlock; otherwise it wraps
// lockbridge.ErrLost.
func (l *Lock) Err() error { return l.get().Err() }
