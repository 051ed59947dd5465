package driver

import (
	"context"
	"errors"
	"strings"
	"time"
)

// Client is the set of Redis calls the locks need. Keys and values are Go
// strings holding raw bytes. A nil reply is never an error: Get and GetSet
// report it with ok=false, Eval as a nil any.
//
// No call is ever sent twice after it may have reached the server. When a
// command that can change state (every one but the read-only GET, PTTL,
// EXISTS and the like) may have run but its reply never came, the error is
// an *UnknownOutcomeError, wrapping lockbridge.ErrUnknownOutcome; an error
// reply from Redis is a ReplyError; an error from before the send (a
// context already ended, a failed dial) is neither.
type Client interface {
	// Eval runs s with EVALSHA and falls back to EVAL on NOSCRIPT. In Redis
	// Cluster all keys must share one hash slot. Eval must not keep or use
	// keys or args once it has returned (the locks reuse their buffers):
	// a call that returns before its send is done copies them first.
	Eval(ctx context.Context, s *Script, keys []string, args ...any) (any, error)
	// SetNX sends the literal SETNX command (the Java scheme's acquire).
	SetNX(ctx context.Context, key, value string) (bool, error)
	// Get sends GET.
	Get(ctx context.Context, key string) (value string, ok bool, err error)
	// GetSet sends the literal GETSET command (the Java scheme's takeover).
	GetSet(ctx context.Context, key, value string) (old string, ok bool, err error)
	// Del sends DEL for one key and reports whether it existed.
	Del(ctx context.Context, key string) (bool, error)
	// SetNXPX sends SET key value NX PX ms.
	SetNXPX(ctx context.Context, key, value string, ttl time.Duration) (bool, error)
	// Subscribe opens a subscription for release notifications, subscribed
	// to channels (which may be none) once it returns.
	Subscribe(ctx context.Context, channels ...string) (Subscription, error)
	// Cluster reports whether the client talks to a Redis Cluster. Scripts
	// then need all their keys in one slot, and notifications go over sharded
	// pub/sub (SPUBLISH / SSUBSCRIBE).
	Cluster() bool
	// Do sends any other command, with the reply normalised.
	Do(ctx context.Context, args ...any) (any, error)
}

// ReplyError is an error reply from Redis, such as "WRONGTYPE Operation
// against a key holding the wrong kind of value" or "NOSCRIPT …". Adapters
// return it for every error reply, so callers can test with errors.As.
type ReplyError string

func (e ReplyError) Error() string { return string(e) }

// Prefix returns the error code: the first word of the reply, e.g. "WRONGTYPE".
func (e ReplyError) Prefix() string {
	s := string(e)
	if i := strings.IndexByte(s, ' '); i >= 0 {
		return s[:i]
	}
	return s
}

// HasPrefix reports whether err is a ReplyError whose code is code.
func HasPrefix(err error, code string) bool {
	if err == nil {
		return false
	}
	var re ReplyError
	return errors.As(err, &re) && re.Prefix() == code
}
