package driver

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Pinner is an optional interface of a Conn: Pin returns a Conn bound to one
// connection — to the node serving key, in a cluster — so that a command
// sent after another on it runs on the same connection (WAIT counts the
// replicas that acknowledged the writes of its own connection). release
// gives the connection back; the pinned Conn must not be used after.
type Pinner interface {
	Pin(ctx context.Context, key string) (pinned Conn, release func(), err error)
}

// ErrNoPin is what EvalWait returns when the adapter cannot send two
// commands on one connection.
var ErrNoPin = errors.New("driver: this client cannot send WAIT on the connection of a write")

// Waiter is implemented by every Client Wrap returns: EvalWait runs s as
// Eval does (keys[0] picks the node in a cluster), then, on the same
// connection, WAIT replicas timeout, and returns the script's reply and how
// many replicas acknowledged its writes (WAIT's reply). When the script
// fails, WAIT is not sent (acked is 0). When the adapter cannot pin a
// connection, the error wraps ErrNoPin and nothing is sent.
type Waiter interface {
	EvalWait(ctx context.Context, s *Script, keys []string, replicas int, timeout time.Duration, args ...any) (reply any, acked int64, err error)
}

var _ Waiter = client{}

func (c client) EvalWait(ctx context.Context, s *Script, keys []string, replicas int, timeout time.Duration, args ...any) (any, int64, error) {
	p, ok := c.c.(Pinner)
	if !ok || len(keys) == 0 {
		return nil, 0, ErrNoPin
	}
	pc, release, err := p.Pin(ctx, keys[0])
	if err != nil {
		return nil, 0, fmt.Errorf("driver: pin a connection: %w", err)
	}
	defer release()
	pinned := client{pc}
	r, err := pinned.Eval(ctx, s, keys, args...)
	if err != nil {
		return nil, 0, err
	}
	w, err := pinned.do(ctx, "WAIT", replicas, timeout.Milliseconds())
	if err != nil {
		return r, 0, fmt.Errorf("driver: WAIT after script %s: %w", s.name, err)
	}
	n, ok := w.(int64)
	if !ok {
		return r, 0, fmt.Errorf("driver: WAIT: unexpected reply %#v", w)
	}
	return r, n, nil
}
