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

func (c *client) EvalWait(ctx context.Context, s *driver.Script, keys []string, replicas int, timeout time.Duration,
	args ...any) (any, int64, error) {
	p, ok := c.c.(Pinner)
	if !ok || len(keys) == 0 {
		return nil, 0, driver.ErrNoPin
	}
	// A cluster refusal of the script (it did not run, and WAIT was not
	// sent) is not followed on the pinned connection, whose WAIT must count
	// the node that ran the script: the whole call starts again on a
	// connection pinned anew, after a pause, as the client learns where
	// the slot went (an ASK is waited out: the move ends in a MOVED).
	var f follower
	for {
		r, acked, err := c.evalWaitOnce(ctx, p, s, keys, replicas, timeout, args)
		if err == nil || r != nil || !c.c.Cluster() {
			return r, acked, err
		}
		_, _, again, stop := f.next(ctx, err, false)
		switch {
		case stop != nil:
			return nil, 0, fmt.Errorf("driver: script %s: %w", s.Name(), stop)
		case !again:
			return nil, 0, err
		}
	}
}

// evalWaitOnce is EvalWait on one pinned connection.
func (c *client) evalWaitOnce(ctx context.Context, p Pinner, s *driver.Script, keys []string, replicas int,
	timeout time.Duration, args []any) (any, int64, error) {
	pc, release, err := p.Pin(ctx, keys[0])
	if err != nil {
		return nil, 0, fmt.Errorf("driver: pin a connection: %w", err)
	}
	defer release()
	pinned := &client{c: pc, pinned: true}
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
