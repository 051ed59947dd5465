package lockbridge

import (
	"context"
	"fmt"
)

// WithLock returns a copy of parent that is cancelled as soon as lk is
// released or lost (its Done closes), as etcd's Session.Ctx is: work done
// under the lock can take the context and stop when the lock goes.
// context.Cause of the returned context is then lk.Err() — wrapping
// ErrLost — for a lost lock, or an error wrapping ErrNotHeld for a released
// one. Call cancel when the work is done, as with context.WithCancel: it
// frees the goroutine that watches the lock (and does not release the
// lock). A nil parent or lk gives a context already cancelled with an
// error wrapping ErrInvalid.
func WithLock(parent context.Context, lk Lock) (ctx context.Context, cancel context.CancelFunc) {
	if parent == nil {
		parent = context.Background()
		c, cancel := context.WithCancelCause(parent)
		cancel(fmt.Errorf("lockbridge: WithLock: %w: nil context", ErrInvalid))
		return c, func() {}
	}
	c, cancelCause := context.WithCancelCause(parent)
	if lk == nil {
		cancelCause(fmt.Errorf("lockbridge: WithLock: %w: nil lock", ErrInvalid))
		return c, func() {}
	}
	go func() {
		select {
		case <-lk.Done():
			if err := lk.Err(); err != nil {
				cancelCause(err)
				return
			}
			cancelCause(fmt.Errorf("lockbridge: lock %q released: %w", lk.Key(), ErrNotHeld))
		case <-c.Done():
		}
	}()
	return c, func() { cancelCause(context.Canceled) }
}

// Typed returns the lock of a TryLock or Lock call as its package's
// concrete type T — *legacy.Lock, *modern.Lock, *migrate.Lock or
// *redlock.Lock — for the methods beyond Lock (Fence, TTL, Phase, Value)
// without a type assertion:
//
//	lk, err := lockbridge.Typed[*modern.Lock](locker.TryLock(ctx, "k", ttl))
//	if err == nil { fence := lk.Fence() }
//
// The call's error comes back as it is. A lock of another type is released
// (a lock nobody can use would otherwise stay held for its ttl) and the
// error wraps ErrInvalid.
func Typed[T Lock](lk Lock, err error) (T, error) {
	var zero T
	if err != nil {
		return zero, err
	}
	if lk == nil {
		return zero, fmt.Errorf("lockbridge: %w: no lock and no error", ErrInvalid)
	}
	t, ok := lk.(T)
	if !ok {
		uerr := lk.Unlock(context.Background())
		if uerr != nil {
			return zero, fmt.Errorf("lockbridge: %w: the lock is a %T, not a %T (and releasing it failed: %v)", ErrInvalid, lk,
				zero, uerr)
		}
		return zero, fmt.Errorf("lockbridge: %w: the lock is a %T, not a %T (released)", ErrInvalid, lk, zero)
	}
	return t, nil
}
