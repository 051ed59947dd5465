package lockbridge

import (
	"fmt"
	"strings"
	"time"
)

// Reason is why a Refresh or Unlock found a lock no longer ours.
type Reason int

// The reasons.
const (
	// ReasonGone: the key is gone — its lease ran out on the server, or it
	// was deleted.
	ReasonGone Reason = iota + 1
	// ReasonExpired: the lease had ended by the holder's own clock (the
	// owner window of a timestamp lock had closed), or the command reached
	// Redis past it by more than the server-clock margin.
	ReasonExpired
	// ReasonTaken: the key holds another holder's value.
	ReasonTaken
	// ReasonEnded: the lock had been released, or was known lost, before
	// the call.
	ReasonEnded
)

// String returns "gone", "expired", "taken" or "ended".
func (r Reason) String() string {
	switch r {
	case ReasonGone:
		return "gone"
	case ReasonExpired:
		return "expired"
	case ReasonTaken:
		return "taken"
	case ReasonEnded:
		return "ended"
	}
	return fmt.Sprintf("Reason(%d)", int(r))
}

// NotHeldError is a Refresh or Unlock that found the lock no longer ours,
// and the cause inside a lost lock's Err when a refresh found it so. Every
// lock package reports it the same way. It wraps ErrNotHeld:
//
//	var nh *lockbridge.NotHeldError
//	if errors.As(err, &nh) && nh.Reason == lockbridge.ReasonTaken { … }
type NotHeldError struct {
	Pkg    string // the package reporting it: "legacy", "modern", "migrate", "redlock"
	Key    string // the lock's name
	Reason Reason
	// Detail says more, in words, when there is more to say: which key of
	// a dual-phase lock, which clock. It may be empty.
	Detail string
}

func (e *NotHeldError) Error() string {
	var why string
	switch e.Reason {
	case ReasonGone:
		why = "it is gone"
	case ReasonExpired:
		why = "its lease has ended"
	case ReasonTaken:
		why = "another holder has it"
	case ReasonEnded:
		why = "it was released or lost already"
	default:
		why = e.Reason.String()
	}
	s := fmt.Sprintf("%s: lock %q not held: %s", e.Pkg, e.Key, why)
	if e.Detail != "" {
		s += " (" + e.Detail + ")"
	}
	return s
}

// Unwrap returns ErrNotHeld.
func (e *NotHeldError) Unwrap() error { return ErrNotHeld }

// NotObtainedError is an attempt that found the lock held by another
// holder, and what Lock's error wraps when it gives up. Every lock package
// reports it the same way. It wraps ErrNotObtained:
//
//	var no *lockbridge.NotObtainedError
//	if errors.As(err, &no) && no.HolderTTL > 0 { retryAfter(no.HolderTTL) }
type NotObtainedError struct {
	Pkg string // the package reporting it: "legacy", "modern", "redisson", …
	Key string // the lock's name
	// HolderTTL is how long the holder has left, read by the attempt: the
	// key's PTTL in the same round trip (modern, redisson) or, for a
	// timestamp lock (legacy), the time until a takeover is allowed by this
	// locker's clock and skew margin. Negative when the key has no expiry;
	// 0 when unknown.
	HolderTTL time.Duration
	// Detail says more, in words, when there is more to say: a timestamp
	// lock's stored expiry and the instant it stands for, a fair lock's
	// waiter ahead in the queue. It may be empty.
	Detail string
}

func (e *NotObtainedError) Error() string {
	var why []string
	switch {
	case e.HolderTTL > 0:
		why = append(why, fmt.Sprintf("held by another for %v more", e.HolderTTL))
	case e.HolderTTL < 0:
		why = append(why, "held by another with no expiry")
	case e.Detail == "":
		why = append(why, "held by another (its lease unknown)")
	}
	if e.Detail != "" {
		why = append(why, e.Detail)
	}
	return fmt.Sprintf("%s: lock %q not obtained: %s", e.Pkg, e.Key, strings.Join(why, ", "))
}

// Unwrap returns ErrNotObtained.
func (e *NotObtainedError) Unwrap() error { return ErrNotObtained }
