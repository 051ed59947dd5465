// Package driver is the small Redis interface every lock in this module is
// written against, so that no lock package imports a Redis client library.
//
// Users take a ready adapter — driver/goredis, driver/redigoadapter, or
// driver/rueidisadapter and driver/valkeyadapter (Go modules of their own) —
// and meet this package for its errors: the Redis error classes (ErrNoPerm,
// ErrWrongType, …, matchable with errors.Is), ReplyError, and
// UnknownOutcomeError. Authors of an adapter for another client library
// implement driver/adapter's Conn, which builds the Client; its conformance
// suite is adaptertest (at the module root). Scripts are Script values that run
// with EVALSHA and fall back to EVAL on NOSCRIPT.
//
// Replies are normalised the same way whatever the client library: bulk and
// status strings as string (binary-safe), integers as int64, arrays as []any,
// a nil reply as nil with no error, and error replies as a ReplyError.
package driver
