package redisson

import (
	"errors"
	"fmt"

	"github.com/lockbridge/lockbridge"
)

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
