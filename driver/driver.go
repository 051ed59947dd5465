package driver

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/lockbridge/lockbridge"
)

// Client is the set of Redis calls the locks need. Keys and values are Go
// strings holding raw bytes. A nil reply is never an error: Get and GetSet
// report it with ok=false, Eval as a nil any.
type Client interface {
	// Eval runs s with EVALSHA and falls back to EVAL on NOSCRIPT. In Redis
	// Cluster all keys must share one hash slot.
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

// Conn is what an adapter provides; Wrap builds the Client on top of it.
type Conn interface {
	// Do sends one command and returns its reply normalised: string, int64,
	// []any or nil; an error reply as a ReplyError. Do must honour ctx:
	// return once it ends, with an error wrapping ctx.Err().
	Do(ctx context.Context, args ...any) (any, error)
	// Subscribe opens a dedicated pub/sub connection (see Subscription).
	Subscribe(ctx context.Context, channels ...string) (Subscription, error)
	// Cluster reports whether the connection is to a Redis Cluster.
	Cluster() bool
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

// Wrap returns the Client built on c.
func Wrap(c Conn) Client { return client{c} }

type client struct{ c Conn }

func (c client) Do(ctx context.Context, args ...any) (any, error) { return c.do(ctx, args...) }

// do sends one command. An error that comes with an ended context, such as
// a read timeout set from its deadline, is reported as the context's error.
//
// An error that is not a reply from Redis, on a command that may have been
// sent, wraps lockbridge.ErrUnknownOutcome: the command may have run and
// its reply been lost (a broken connection, a timeout, a context that ended
// while it was on the wire). Adapters never send it again; the lock that
// sent it decides what the uncertainty means. A context that ended before
// the call, a refused connection and a refused client are certain: nothing
// was sent.
func (c client) do(ctx context.Context, args ...any) (any, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r, err := c.c.Do(ctx, args...)
	if err == nil {
		return r, nil
	}
	var re ReplyError
	if errors.As(err, &re) || errors.Is(err, lockbridge.ErrInvalid) || errors.Is(err, syscall.ECONNREFUSED) {
		return r, err
	}
	cerr := ctx.Err()
	if dl, ok := ctx.Deadline(); ok && cerr == nil && !time.Now().Before(dl) {
		cerr = context.DeadlineExceeded // a read timeout set from the deadline fired first
	}
	if cerr != nil && !errors.Is(err, cerr) {
		err = fmt.Errorf("%w (%v)", cerr, err)
	}
	return r, fmt.Errorf("%w: %w", lockbridge.ErrUnknownOutcome, err)
}
func (c client) Cluster() bool { return c.c.Cluster() }
func (c client) Subscribe(ctx context.Context, channels ...string) (Subscription, error) {
	return c.c.Subscribe(ctx, channels...)
}

func (c client) Eval(ctx context.Context, s *Script, keys []string, args ...any) (any, error) {
	a := make([]any, 0, 3+len(keys)+len(args))
	a = append(a, "EVALSHA", s.hash, strconv.Itoa(len(keys)))
	for _, k := range keys {
		a = append(a, k)
	}
	a = append(a, args...)
	r, err := c.do(ctx, a...)
	if HasPrefix(err, "NOSCRIPT") {
		a[0], a[1] = "EVAL", s.src
		r, err = c.do(ctx, a...)
	}
	if err != nil {
		if errors.Is(err, ErrNoPerm) {
			return nil, fmt.Errorf("driver: script %s (it runs EVALSHA, EVAL and %s): %w", s.name, strings.Join(s.commands, ", "), err)
		}
		return nil, fmt.Errorf("driver: script %s: %w", s.name, err)
	}
	return r, nil
}

func (c client) SetNX(ctx context.Context, key, value string) (bool, error) {
	r, err := c.do(ctx, "SETNX", key, value)
	if err != nil {
		return false, fmt.Errorf("driver: SETNX: %w", err)
	}
	return integerBool("SETNX", r)
}

func (c client) Get(ctx context.Context, key string) (string, bool, error) {
	return c.stringReply(ctx, "GET", key)
}

func (c client) GetSet(ctx context.Context, key, value string) (string, bool, error) {
	return c.stringReply(ctx, "GETSET", key, value)
}

func (c client) Del(ctx context.Context, key string) (bool, error) {
	r, err := c.do(ctx, "DEL", key)
	if err != nil {
		return false, fmt.Errorf("driver: DEL: %w", err)
	}
	return integerBool("DEL", r)
}

func (c client) SetNXPX(ctx context.Context, key, value string, ttl time.Duration) (bool, error) {
	ms := ttl.Milliseconds()
	if ms < 1 {
		return false, fmt.Errorf("driver: SET NX PX: ttl %v is below one millisecond", ttl)
	}
	r, err := c.do(ctx, "SET", key, value, "NX", "PX", strconv.FormatInt(ms, 10))
	if err != nil {
		return false, fmt.Errorf("driver: SET NX PX: %w", err)
	}
	switch r {
	case nil:
		return false, nil
	case "OK":
		return true, nil
	}
	return false, fmt.Errorf("driver: SET NX PX: unexpected reply %#v", r)
}

func (c client) stringReply(ctx context.Context, args ...any) (string, bool, error) {
	cmd := args[0].(string)
	r, err := c.do(ctx, args...)
	if err != nil {
		return "", false, fmt.Errorf("driver: %s: %w", cmd, err)
	}
	switch v := r.(type) {
	case nil:
		return "", false, nil
	case string:
		return v, true, nil
	}
	return "", false, fmt.Errorf("driver: %s: unexpected reply %#v", cmd, r)
}

func integerBool(cmd string, r any) (bool, error) {
	n, ok := r.(int64)
	if !ok {
		return false, fmt.Errorf("driver: %s: unexpected reply %#v", cmd, r)
	}
	return n == 1, nil
}
