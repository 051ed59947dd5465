package modern

import (
	"errors"
	"fmt"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/internal/protocol/modernproto"
)

// FenceError is an acquire refused because the fence counter cannot give a
// fence (it holds another type, a value that is not a decimal integer, or
// the largest int64). Nothing was written: the lock was not taken and the
// counter is unchanged. It wraps the server's reply. Lock does not wait on
// it: it is returned at once.
type FenceError = modernproto.FenceError

// WrongTypeError is what TryLock, Lock, Unlock, Refresh and TTL return when
// the lock key holds another type than string (a hash, say): not a lock, so
// neither held nor free, and Lock does not wait on it. Nothing was written.
// It wraps the server's WRONGTYPE reply: driver.HasPrefix(err, "WRONGTYPE")
// holds.
type WrongTypeError = modernproto.WrongTypeError

// ReplicationError is an acquire that took the lock on the primary but was
// not acknowledged by as many replicas as WithWait asks for, within its
// timeout (or whose WAIT failed: it wraps WAIT's error). The lock is not
// reported held: it was released at once (Released says whether that
// release found it; when it did not answer, the key expires after its ttl,
// held by nobody).
//
// Refresh returns it too, for a refresh the primary ran but too few
// replicas acknowledged: the lock stays held, but its lease is not
// extended (a failover to a replica that missed the refresh would keep the
// key with its earlier expiry); the auto-refresh tries again.
//
//	var re *modern.ReplicationError
//	if errors.As(err, &re) {
//		log.Printf("lock %s: only %d replicas acknowledged", re.Key, re.Acked)
//	}
type ReplicationError struct {
	Key      string
	Acked    int64 // replicas that acknowledged
	Released bool  // the owner-checked release ran and deleted the key

	want    int   // replicas asked for
	err     error // WAIT's error, if it failed
	refresh bool  // a refresh's: the lease was not extended (the lock is still held until its end)
}

func (e *ReplicationError) Error() string {
	if e.refresh {
		return fmt.Sprintf("modern: refresh of lock %q not counted: %d of %d replicas acknowledged it; the lease keeps "+
			"its end", e.Key, e.Acked, e.want)
	}
	msg := fmt.Sprintf("modern: lock %q not taken: %d of %d replicas acknowledged the acquire", e.Key, e.Acked, e.want)
	if e.err != nil {
		msg += ": " + e.err.Error()
	}
	return msg
}

// Unwrap returns WAIT's error, if any.
func (e *ReplicationError) Unwrap() error { return e.err }

// errReleased is what Unlock, Refresh and TTL return on a lock this Lock
// value already unlocked.
func (lk *Lock) errReleased() error {
	return &lockbridge.NotHeldError{Pkg: "modern", Key: lk.names.Key, Reason: lockbridge.ReasonEnded, Detail: "unlocked"}
}

// errNilLock is returned by the methods of a nil *Lock.
var errNilLock = fmt.Errorf("modern: %w: nil lock", lockbridge.ErrNotHeld)

// errNilLockCall is returned by Refresh and TTL on a nil *Lock: a bad
// argument, and not held either.
var errNilLockCall = fmt.Errorf("modern: %w: nil lock: %w", lockbridge.ErrInvalid, lockbridge.ErrNotHeld)

// errZeroLock is returned by the methods of a Lock not made by a Locker.
var errZeroLock = fmt.Errorf("modern: %w: zero Lock (locks come from a Locker)", lockbridge.ErrInvalid)

// isNotObtained reports whether err is another holder's lock.
func isNotObtained(err error) bool { return errors.Is(err, lockbridge.ErrNotObtained) }
