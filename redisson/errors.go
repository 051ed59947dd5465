package redisson

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/lockbridge/lockbridge"
)

// NotObtainedError is what TryLock returns when another owner — a Go owner
// of any Locker, or a Java thread — holds the lock, or, on a fair lock,
// another waiter is queued ahead (and what Lock's error wraps when its
// backoff gives up). It wraps lockbridge.ErrNotObtained.
type NotObtainedError struct {
	Key string
	// HolderTTL is the holder's remaining lease, read by the attempt in the
	// same round trip: the PTTL Redisson's acquire returns (on a fair lock,
	// read with PTTL just after it). Negative when the key has no expiry; 0
	// when unknown or nobody holds it.
	HolderTTL time.Duration

	// ahead is, on a fair lock (WithFair), the field
	// ("<client id>:<owner id>") of the waiter at the head of the queue when
	// it is not this owner: it goes first, even with the lock free. A waiter
	// that died keeps its place until aheadUntil. Read after the attempt,
	// not with it; "" when none or unknown. The message names both.
	ahead string
	// aheadUntil is ahead's timeout in the timeout set: the time, by the
	// waiters' clocks, after which the next attempt drops it from the queue.
	aheadUntil time.Time
}

func (e *NotObtainedError) Error() string {
	msg := "redisson: lock " + strconv.Quote(e.Key) + " not obtained: "
	switch {
	case e.HolderTTL > 0:
		msg += "held by another owner for " + e.HolderTTL.String() + " more"
	case e.HolderTTL < 0:
		msg += "held by another owner with no expiry"
	case e.ahead == "":
		msg += "held by another owner (its lease unknown)"
	}
	if e.ahead != "" {
		if e.HolderTTL != 0 {
			msg += ", and "
		}
		msg += "a queued waiter is ahead (" + strconv.Quote(e.ahead)
		if !e.aheadUntil.IsZero() {
			msg += ", keeping its place until " + e.aheadUntil.UTC().Format(
				"2006-01-02T15:04:05.000Z07:00") + " if it does not take its turn"
		}
		msg += ")"
	}
	return msg
}

// Unwrap returns lockbridge.ErrNotObtained.
func (e *NotObtainedError) Unwrap() error { return lockbridge.ErrNotObtained }

// errNilLock is returned by the methods of a nil *Lock.
var errNilLock = fmt.Errorf("redisson: %w: nil lock", lockbridge.ErrNotHeld)

// errZeroLock is returned by the methods of a Lock not made by an Owner.
var errZeroLock = fmt.Errorf("redisson: %w: zero Lock (locks come from a Locker or an Owner)", lockbridge.ErrInvalid)

// errNilOwner is returned by the methods of a nil or zero *Owner.
var errNilOwner = fmt.Errorf("redisson: %w: nil or zero Owner (owners come from Locker.NewOwner)",
	lockbridge.ErrInvalid)

// isNotObtained reports whether err is another owner's lock.
func isNotObtained(err error) bool { return errors.Is(err, lockbridge.ErrNotObtained) }

// unexpected is the error of a script reply of the wrong shape.
func unexpected(script string, r any) error {
	return fmt.Errorf("redisson: %s: unexpected reply %#v", script, r)
}
