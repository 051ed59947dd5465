package lease

import (
	"fmt"

	"github.com/lockbridge/lockbridge"
)

// UnknownReleaseError is the verdict of an Unlock that cannot tell whether
// its release ran. Either the release's reply never came (Cause: the
// driver's error) — the release is never sent again, so the lock ends as
// lost and its key, if the release did not run, expires at its lease — or
// (Cause nil; redlock's Unlock called again on a node whose earlier reply
// was lost) asking again found the key held by another token, which cannot
// tell "our release ran and a successor came after" from "our key was lost
// (evicted, a restart without persistence) and a successor holds". It wraps
// lockbridge.ErrUnknownOutcome, never "released" and never
// lockbridge.ErrNotHeld.
type UnknownReleaseError struct {
	Pkg, Key string
	Cause    error
}

func (e *UnknownReleaseError) Error() string {
	if e.Cause != nil {
		return fmt.Sprintf("%s: unlock of %q: %v: the release was sent and its reply never came: it may or may not "+
			"have run, and it is not sent again (the key, if still ours, expires at its lease): %v", e.Pkg, e.Key,
			lockbridge.ErrUnknownOutcome, e.Cause)
	}
	return fmt.Sprintf("%s: unlock of %q: %v: the release's reply was lost and asking again found another holder: "+
		"the release may have run before it came, or the key was lost before the release", e.Pkg, e.Key,
		lockbridge.ErrUnknownOutcome)
}

// Unwrap returns lockbridge.ErrUnknownOutcome and the cause, if any.
func (e *UnknownReleaseError) Unwrap() []error {
	if e.Cause == nil {
		return []error{lockbridge.ErrUnknownOutcome}
	}
	return []error{lockbridge.ErrUnknownOutcome, e.Cause}
}

// UnknownRelease returns the *UnknownReleaseError of package pkg's lock key
// whose asking again found another holder.
func UnknownRelease(pkg, key string) error { return &UnknownReleaseError{Pkg: pkg, Key: key} }

// UnansweredRelease returns the *UnknownReleaseError of package pkg's lock
// key whose release got no reply (cause, wrapping
// lockbridge.ErrUnknownOutcome).
func UnansweredRelease(pkg, key string, cause error) error {
	return &UnknownReleaseError{Pkg: pkg, Key: key, Cause: cause}
}
