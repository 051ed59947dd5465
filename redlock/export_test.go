package redlock

import "time"

// The rounds, for the tests of QuorumError.
const (
	OpAcquire = opAcquire
	OpRefresh = opRefresh
	OpUnlock  = opUnlock
)

// WithOp sets the round e reports on and returns e.
func WithOp(op string, e *QuorumError) *QuorumError { e.op = op; return e }

// OpOf returns the round e reports on.
func OpOf(e *QuorumError) string { return e.op }

// ValidityOf returns what was left of the lease after e's round.
func ValidityOf(e *QuorumError) time.Duration { return e.validity }
