// Package driver is the small Redis interface every lock in this module is
// written against, so that no lock package imports a Redis client library.
//
// An adapter (driver/goredis, driver/redigo) implements Conn — one command at a
// time, with replies normalised — and pub/sub; Wrap turns a Conn into a Client
// with the few commands the locks use. Scripts are Script values that run with
// EVALSHA and fall back to EVAL on NOSCRIPT.
//
// Replies are normalised the same way whatever the client library: bulk and
// status strings as string (binary-safe), integers as int64, arrays as []any,
// a nil reply as nil with no error, and error replies as a ReplyError.
package driver
