package redisson

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/lockbridge/lockbridge"
)

// NotObtainedError is what TryLock returns when another owner — a Go owner
// of any Locker, or a Java thread — holds the lock (and what Lock's error
// wraps when its backoff gives up). It wraps lockbridge.ErrNotObtained.
type NotObtainedError struct {
	Key string
	// HolderTTL is the holder's remaining lease, read by the attempt in the
	// same round trip: the PTTL Redisson's acquire returns. Negative when
	// the key has no expiry; 0 when unknown.
	HolderTTL time.Duration
}

func (e *NotObtainedError) Error() string {
	left := "for " + e.HolderTTL.String() + " more"
	if e.HolderTTL < 0 {
		left = "with no expiry"
	}
	return "redisson: lock " + strconv.Quote(e.Key) + " not obtained: held by another owner " + left
}

// Unwrap returns lockbridge.ErrNotObtained.
func (e *NotObtainedError) Unwrap() error { return lockbridge.ErrNotObtained }

// errNilLock is returned by the methods of a nil *Lock.
var errNilLock = fmt.Errorf("redisson: %w: nil lock", lockbridge.ErrNotHeld)

// errZeroLock is returned by the methods of a Lock not made by an Owner.
var errZeroLock = fmt.Errorf("redisson: %w: zero Lock (locks come from a Locker or an Owner)", lockbridge.ErrInvalid)

// errNilOwner is returned by the methods of a nil or zero *Owner.
var errNilOwner = fmt.Errorf("redisson: %w: nil or zero Owner (owners come from Locker.NewOwner)", lockbridge.ErrInvalid)

// isNotObtained reports whether err is another owner's lock.
func isNotObtained(err error) bool { return errors.Is(err, lockbridge.ErrNotObtained) }

// unexpected is the error of a script reply of the wrong shape.
func unexpected(script string, r any) error {
	return fmt.Errorf("redisson: %s: unexpected reply %#v", script, r)
}
