package adapter

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/driver"
)

// Conn is what an adapter provides; Wrap builds the driver.Client on top of it.
type Conn interface {
	// Do sends one command and returns its reply normalised: string, int64,
	// []any or nil; an error reply as a driver.ReplyError. Do must honour ctx:
	// return once it ends, with an error wrapping ctx.Err().
	//
	// Do sends the command at most once: it never resends it after it may
	// have reached the server, whatever the client library would do. A
	// reply by which a cluster refused the command before running it
	// (MOVED, ASK, TRYAGAIN, CLUSTERDOWN) may be returned as it is: the
	// Client of Wrap follows it (see MaxRedirects, ClusterRetryFor and
	// Redirector). An error from before anything was sent is marked with
	// NotSent; any other error that is not a driver.ReplyError is taken to
	// mean the command may have run.
	Do(ctx context.Context, args ...any) (any, error)
	// Subscribe opens a dedicated pub/sub connection (see driver.Subscription).
	Subscribe(ctx context.Context, channels ...string) (driver.Subscription, error)
	// Cluster reports whether the connection is to a Redis Cluster.
	Cluster() bool
}

// Wrap returns the driver.Client built on c.
func Wrap(c Conn) driver.Client { return &client{c: c} }

type client struct {
	c Conn
	// pinned: c is one connection (EvalWait), on which a redirect is not
	// followed — the command after it must run where this one did.
	pinned bool
	// px is the PX argument SetNXPX sent last, formatted and boxed: a
	// locker sends the same ttl again and again.
	px atomic.Pointer[pxWord]
}

// pxWord is a PX argument: ms milliseconds as a command word, also boxed.
type pxWord struct {
	ms   int64
	word string
	arg  any
}

// pxWord returns ms as a command word, from the cache when it matches.
func (c *client) pxWord(ms int64) *pxWord {
	if w := c.px.Load(); w != nil && w.ms == ms {
		return w
	}
	s := strconv.FormatInt(ms, 10)
	w := &pxWord{ms: ms, word: s, arg: s}
	c.px.Store(w)
	return w
}

func (c *client) Do(ctx context.Context, args ...any) (any, error) { return c.do(ctx, args...) }

// do sends one command. A context already ended sends nothing. In a
// cluster, a refusal (MOVED, ASK, TRYAGAIN, CLUSTERDOWN: the command did not
// run) is followed (see follow). An error that comes with an ended context,
// such as a read timeout set from its deadline, is reported as the context's
// error; an error after which the command may have run — a broken
// connection, a timeout, a context that ended while it was on the wire — is
// an *driver.UnknownOutcomeError wrapping lockbridge.ErrUnknownOutcome (see
// mayHaveRun). Adapters never send it again; the lock that sent it decides
// what the uncertainty means.
func (c *client) do(ctx context.Context, args ...any) (any, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r, err := c.c.Do(ctx, args...)
	if err != nil && c.follows(err) {
		r, err = c.follow(ctx, err, args, nil, nil)
	}
	if err != nil {
		name, _ := args[0].(string)
		return r, c.fail(ctx, name, err)
	}
	return r, nil
}

// follows reports whether err is a cluster refusal this client follows.
func (c *client) follows(err error) bool {
	k, _ := redirectOf(err)
	return k != notRedirect && !c.pinned && c.c.Cluster()
}

// fail is the error of command name that failed with err (see do).
func (c *client) fail(ctx context.Context, name string, err error) error {
	unknown := mayHaveRun(name, err) && !errors.Is(err, lockbridge.ErrInvalid)
	cerr := ctx.Err()
	if dl, ok := ctx.Deadline(); ok && cerr == nil && !time.Now().Before(dl) {
		cerr = context.DeadlineExceeded // a read timeout set from the deadline fired first
	}
	if cerr != nil && !errors.Is(err, cerr) {
		err = fmt.Errorf("%w (%w)", cerr, err)
	}
	if unknown {
		err = &driver.UnknownOutcomeError{Command: name, Err: err}
	}
	return err
}

func (c *client) Cluster() bool { return c.c.Cluster() }
func (c *client) Subscribe(ctx context.Context, channels ...string) (driver.Subscription, error) {
	return c.c.Subscribe(ctx, channels...)
}

func (c *client) Eval(ctx context.Context, s *driver.Script, keys []string, args ...any) (any, error) {
	var (
		r   any
		err error
		ok  bool
	)
	if wc, is := c.c.(WordsConn); is {
		r, ok, err = c.evalWords(ctx, wc, s, keys, args)
	}
	if !ok {
		a := s.EvalSHAArgs(keys, args)
		r, err = c.do(ctx, a...)
		if driver.HasPrefix(err, "NOSCRIPT") {
			s.SetEval(a)
			r, err = c.do(ctx, a...)
		}
	}
	if err != nil {
		if errors.Is(err, driver.ErrNoPerm) {
			return nil, fmt.Errorf("driver: script %s (it runs EVALSHA, EVAL and %s): %w", s.Name(), strings.Join(s.Commands(),
				", "), err)
		}
		return nil, fmt.Errorf("driver: script %s: %w", s.Name(), err)
	}
	return r, nil
}

func (c *client) SetNX(ctx context.Context, key, value string) (bool, error) {
	r, err := c.do(ctx, "SETNX", key, value)
	if err != nil {
		return false, fmt.Errorf("driver: SETNX: %w", err)
	}
	return integerBool("SETNX", r)
}

func (c *client) Get(ctx context.Context, key string) (string, bool, error) {
	return c.stringReply(ctx, "GET", key)
}

func (c *client) GetSet(ctx context.Context, key, value string) (string, bool, error) {
	return c.stringReply(ctx, "GETSET", key, value)
}

func (c *client) Del(ctx context.Context, key string) (bool, error) {
	r, err := c.do(ctx, "DEL", key)
	if err != nil {
		return false, fmt.Errorf("driver: DEL: %w", err)
	}
	return integerBool("DEL", r)
}

func (c *client) SetNXPX(ctx context.Context, key, value string, ttl time.Duration) (bool, error) {
	ms := ttl.Milliseconds()
	if ms < 1 {
		return false, fmt.Errorf("driver: SET NX PX: ttl %v is below one millisecond", ttl)
	}
	var (
		r   any
		err error
	)
	if wc, ok := c.c.(WordsConn); ok {
		r, err = c.setNXPXWords(ctx, wc, key, value, ms)
	} else {
		r, err = c.do(ctx, "SET", key, value, "NX", "PX", c.pxWord(ms).arg)
	}
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

func (c *client) stringReply(ctx context.Context, args ...any) (string, bool, error) {
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
