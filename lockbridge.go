package lockbridge

import (
	"context"
	"errors"
	"time"
)

// Locker takes locks by name. All lockers of this module are safe for
// concurrent use.
type Locker interface {
	// TryLock makes one attempt. When another holder has the lock the error
	// wraps ErrNotObtained.
	TryLock(ctx context.Context, key string, ttl time.Duration) (Lock, error)
	// Lock waits until it obtains the lock or ctx ends; then the error wraps
	// both ErrNotObtained and ctx.Err() — or, when ctx ended while an
	// attempt was on the wire and the lock cannot settle it, both
	// ErrUnknownOutcome and ctx.Err().
	Lock(ctx context.Context, key string, ttl time.Duration) (Lock, error)
}

// Lock is one held lock. Its methods are safe for concurrent use.
type Lock interface {
	// Key is the key the caller named.
	Key() string
	// Token is what this holder wrote, in printable form.
	Token() string
	// ExpiresAt is this holder's view of the end of the lease.
	ExpiresAt() time.Time
	// Refresh extends the lease to ttl from now. It returns an error wrapping
	// ErrNotHeld when the lock is no longer ours.
	Refresh(ctx context.Context, ttl time.Duration) error
	// Unlock releases the lock. It returns an error wrapping ErrNotHeld when
	// the lock is no longer ours.
	Unlock(ctx context.Context) error
	// Done is closed once the lock is released or known lost.
	Done() <-chan struct{}
	// Err is nil while the lock is held; after Done is closed it is nil for a
	// clean Unlock and wraps ErrLost otherwise.
	Err() error
}

var (
	// ErrNotObtained means the lock is held by someone else.
	ErrNotObtained = errors.New("lockbridge: lock not obtained")
	// ErrNotHeld means a Refresh or Unlock found the lock no longer ours.
	ErrNotHeld = errors.New("lockbridge: lock not held")
	// ErrLost means a held lock was found gone or taken, or could not be
	// refreshed before its lease ended.
	ErrLost = errors.New("lockbridge: lock lost")
	// ErrInvalid means an argument or option was out of range: an empty key,
	// a ttl below one millisecond, a key the scheme cannot encode, and so on.
	ErrInvalid = errors.New("lockbridge: invalid argument")
	// ErrUnknownOutcome means a command that changes lock state may have
	// reached Redis but its reply never came (the connection broke, or the
	// context ended after the send). Nothing is resent and nothing is
	// guessed: the lock may or may not have been taken, released or
	// refreshed. It is never reported as ErrNotObtained or ErrNotHeld.
	ErrUnknownOutcome = errors.New("lockbridge: outcome unknown")
)
