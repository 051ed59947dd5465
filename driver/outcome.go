package driver

import (
	"errors"
	"fmt"
	"strings"

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

// NotSent marks an error of Conn.Do that happened before any byte of the
// command could reach the server — a failed dial, a closed client, a pool
// timeout, a refused client — so that Client reports it as it is rather
// than as an unknown outcome. An adapter must use it only when it is sure.
func NotSent(err error) error {
	if err == nil {
		return nil
	}
	return notSentError{err}
}

type notSentError struct{ err error }

func (e notSentError) Error() string { return e.err.Error() }
func (e notSentError) Unwrap() error { return e.err }

// mayHaveRun reports whether err, the error of Conn.Do for args, leaves it
// unknown whether a command that can change state ran: no reply came, and
// nothing says the command was not sent.
func mayHaveRun(args []any, err error) bool {
	var re ReplyError
	if errors.As(err, &re) {
		return false // the server answered
	}
	var ns notSentError
	if errors.As(err, &ns) {
		return false
	}
	name, _ := args[0].(string)
	return !readOnly[strings.ToUpper(name)]
}

// readOnly are the commands that change nothing a lock depends on: a lost
// reply to one of them leaves nothing unknown. Any command not here counts
// as one that may change state, scripts included.
var readOnly = map[string]bool{
	"GET": true, "MGET": true, "STRLEN": true, "EXISTS": true, "TYPE": true,
	"TTL": true, "PTTL": true, "EXPIRETIME": true, "PEXPIRETIME": true,
	"HGET": true, "HMGET": true, "HGETALL": true, "HLEN": true, "HEXISTS": true, "HKEYS": true, "HVALS": true, "HSCAN": true,
	"SMEMBERS": true, "SISMEMBER": true, "SCARD": true, "SSCAN": true,
	"ZRANGE": true, "ZRANGEBYSCORE": true, "ZSCORE": true, "ZCARD": true, "ZCOUNT": true, "ZSCAN": true,
	"LRANGE": true, "LLEN": true, "LINDEX": true,
	"SCAN": true, "KEYS": true, "DBSIZE": true,
	"PING": true, "ECHO": true, "TIME": true, "INFO": true,
	"EVALSHA_RO": true, "EVAL_RO": true, "FCALL_RO": true,
}
