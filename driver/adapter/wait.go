package adapter

import (
	"context"
	"fmt"
	"time"

	"github.com/lockbridge/lockbridge/driver"
)

// Pinner is an optional interface of a Conn: Pin returns a Conn bound to one
// connection — to the node serving key, in a cluster — so that a command
// sent after another on it runs on the same connection (WAIT counts the
// replicas that acknowledged the writes of its own connection). release
// gives the connection back; the pinned Conn must not be used after.
type Pinner interface {
	Pin(ctx context.Context, key string) (pinned Conn, release func(), err error)
}

var _ driver.Waiter = (*client)(nil)

func (c *client) EvalWait(ctx context.Context, s *driver.Script, keys []string, replicas int, timeout time.Duration, args ...any) (any, int64, error) {
	p, ok := c.c.(Pinner)
	if !ok || len(keys) == 0 {
		return nil, 0, driver.ErrNoPin
	}
	pc, release, err := p.Pin(ctx, keys[0])
	if err != nil {
		return nil, 0, fmt.Errorf("driver: pin a connection: %w", err)
	}
	defer release()
	pinned := &client{c: pc}
	r, err := pinned.Eval(ctx, s, keys, args...)
	if err != nil {
		return nil, 0, err
	}
	w, err := pinned.do(ctx, "WAIT", replicas, timeout.Milliseconds())
	if err != nil {
		return r, 0, fmt.Errorf("driver: WAIT after script %s: %w", s.Name(), err)
	}
	n, ok := w.(int64)
	if !ok {
		return r, 0, fmt.Errorf("driver: WAIT: unexpected reply %#v", w)
	}
	return r, n, nil
}
