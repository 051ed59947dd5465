package lease

import (
	"fmt"

	"github.com/lockbridge/lockbridge"
)

// UnknownReleaseError is the verdict of an Unlock whose first release's
// reply was lost and whose asking again found the key held by another
// token. That cannot tell "our release ran and a successor came after" (the
// usual case) from "our key was lost (evicted, a restart without
// persistence) and a successor holds": it wraps lockbridge.ErrUnknownOutcome,
// never "released" and never lockbridge.ErrNotHeld. (Asking again and
// finding the key absent may count as released; that too can follow a key
// lost before the release.)
type UnknownReleaseError struct{ Pkg, Key string }

func (e *UnknownReleaseError) Error() string {
	return fmt.Sprintf("%s: unlock of %q: %v: the release's reply was lost and asking again found another holder: "+
		"the release may have run before it came, or the key was lost before the release", e.Pkg, e.Key,
		lockbridge.ErrUnknownOutcome)
}

// Unwrap returns lockbridge.ErrUnknownOutcome.
func (e *UnknownReleaseError) Unwrap() error { return lockbridge.ErrUnknownOutcome }

// UnknownRelease returns the *UnknownReleaseError of package pkg's lock key.
func UnknownRelease(pkg, key string) error { return &UnknownReleaseError{Pkg: pkg, Key: key} }
