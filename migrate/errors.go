package migrate

import (
	"errors"
	"fmt"
)

// ErrPhaseUnknown means a Locker does not know which phase to lock in — its
// phase lease lapsed, or the namespace's phase is missing, unreadable or
// older than what the Locker already ran — so it refuses to lock rather
// than guess. Every such error is a *PhaseUnknownError, which says why and
// what to do. It is never lockbridge.ErrNotObtained: nobody holds the lock
// as far as anyone knows; the Locker cannot tell whether it may take it.
var ErrPhaseUnknown = errors.New("migrate: phase unknown")

// PhaseReason says why a Locker does not know its phase.
type PhaseReason string

// The reasons of a PhaseUnknownError.
const (
	// ReasonLeaseLapsed: the Locker has not read the phase (and renewed its
	// registry entry) within its phase lease. It recovers by itself once a
	// reading succeeds.
	ReasonLeaseLapsed PhaseReason = "phase lease lapsed"
	// ReasonUninitialized: the namespace never had a phase. An operator
	// starts it at legacy with `lockbridge phase init` (Controller.Init).
	ReasonUninitialized PhaseReason = "namespace not initialised"
	// ReasonLost: the phase key is gone (evicted, flushed, lost in a
	// failover) although the namespace was initialised or this Locker ran a
	// phase from it: `lockbridge phase repair --to P` (Controller.Repair).
	ReasonLost PhaseReason = "phase lost"
	// ReasonWentBack: the namespace's state is older than what this Locker
	// already read (a restore from an old backup, a failover that lost
	// writes, a re-initialised namespace): `lockbridge phase repair`.
	ReasonWentBack PhaseReason = "namespace state went back"
	// ReasonUnreadable: the phase key holds something that is not a phase.
	ReasonUnreadable PhaseReason = "phase unreadable"
)

// PhaseUnknownError is a Locker's or Controller's refusal for want of a
// trustworthy phase. It wraps ErrPhaseUnknown and, when there is one, the
// error that caused it (a Redis error, say).
type PhaseUnknownError struct {
	Namespace string
	Reason    PhaseReason
	// Last is the phase the Locker ran last (0 when none, or for a
	// Controller).
	Last Phase
	// Remedy is what to do, in words, with the command that does it.
	Remedy string
	Cause  error
}

func (e *PhaseUnknownError) Error() string {
	msg := fmt.Sprintf("migrate: namespace %q: %s", e.Namespace, e.Reason)
	if e.Last != 0 {
		msg += fmt.Sprintf(" (this locker last ran %v)", e.Last)
	}
	if e.Cause != nil {
		msg += ": " + e.Cause.Error()
	}
	if e.Remedy != "" {
		msg += "; " + e.Remedy
	}
	return msg
}

// Unwrap returns ErrPhaseUnknown and the cause.
func (e *PhaseUnknownError) Unwrap() []error {
	if e.Cause == nil {
		return []error{ErrPhaseUnknown}
	}
	return []error{ErrPhaseUnknown, e.Cause}
}
