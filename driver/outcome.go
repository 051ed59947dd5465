package driver

import (
	"fmt"

	"github.com/lockbridge/lockbridge"
)

// UnknownOutcomeError is the error of a command that may have reached the
// server but whose reply never came: the connection broke or timed out
// after the send, or the context ended while the command was on its way.
// The command may or may not have run. Nothing is resent. It wraps
// lockbridge.ErrUnknownOutcome and the transport error (and the context's
// error, when the context ended):
//
//	errors.Is(err, lockbridge.ErrUnknownOutcome)
//
// Client reports it for every command that can change state; for the
// read-only commands it knows (GET, PTTL, EXISTS, …) a lost reply is just
// the transport error, as nothing can have changed.
type UnknownOutcomeError struct {
	// Command is the command's name as sent, e.g. "SETNX" or "EVALSHA".
	Command string
	// Err is the transport error.
	Err error
}

func (e *UnknownOutcomeError) Error() string {
	return fmt.Sprintf("driver: %s: no reply, the command may or may not have run: %v", e.Command, e.Err)
}

// Unwrap returns lockbridge.ErrUnknownOutcome and the transport error.
func (e *UnknownOutcomeError) Unwrap() []error { return []error{lockbridge.ErrUnknownOutcome, e.Err} }
