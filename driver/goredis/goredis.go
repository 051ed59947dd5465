package goredis

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/driver/adapter"
	"github.com/lockbridge/lockbridge/internal/protocol/keyslot"
)

// New returns the driver.Client for c.
//
// lockbridge never lets a lower layer send a command that changes lock
// state twice (a resent release can delete the next holder's lock), so c
// must not resend a command whose reply was lost: create it with
// MaxRetries: -1, and a ClusterClient also with MaxRedirects: -1 (its
// redirect loop resends after a broken connection or a timeout; the
// adapter follows MOVED, TRYAGAIN and CLUSTERDOWN replies itself, which
// Redis sends before running a command). A client that would resend, or a
// UniversalClient of another type, is refused: every call of the returned
// Client fails with an error wrapping lockbridge.ErrInvalid that names the
// setting. Check reports the same at start-up.
func New(c redis.UniversalClient) driver.Client {
	cn := conn{c: c}
	if err := Check(c); err != nil {
		cn.refused = err
		return adapter.Wrap(cn)
	}
	switch x := c.(type) {
	case *redis.Client:
		cn.deadlines = x.Options().ContextTimeoutEnabled
	case *redis.ClusterClient:
		cn.cluster = true
		cn.deadlines = x.Options().ContextTimeoutEnabled
	case *redis.Ring:
		cn.ring = true
	}
	return adapter.Wrap(cn)
}

// Check returns an error wrapping lockbridge.ErrInvalid when c would resend
// a command after its reply was lost (go-redis's default MaxRetries is 3,
// and a ClusterClient's MaxRedirects 3), or is of a type the adapter does
// not know; nil when New's Client can use it.
func Check(c redis.UniversalClient) error {
	var why string
	switch x := c.(type) {
	case nil:
		why = "nil client"
	case *redis.Client:
		if n := x.Options().MaxRetries; n > 0 {
			why = fmt.Sprintf("the client resends a command whose reply was lost (MaxRetries %d): create it with MaxRetries: -1", n)
		}
	case *redis.ClusterClient:
		o := x.Options()
		switch {
		case o.MaxRetries > 0:
			why = fmt.Sprintf("the cluster client resends a command whose reply was lost (MaxRetries %d): create it with MaxRetries: -1 and MaxRedirects: -1", o.MaxRetries)
		case o.MaxRedirects > 0:
			why = fmt.Sprintf("the cluster client's redirect loop resends a command after a broken connection or a timeout (MaxRedirects %d): create it with MaxRedirects: -1 (the adapter follows MOVED itself)", o.MaxRedirects)
		}
	case *redis.Ring:
		if n := x.Options().MaxRetries; n > 0 {
			why = fmt.Sprintf("the ring resends a command whose reply was lost (MaxRetries %d): create it with MaxRetries: -1", n)
		}
	default:
		why = fmt.Sprintf("a %T: the adapter cannot tell whether it resends commands; pass a *redis.Client, *redis.ClusterClient or *redis.Ring", c)
	}
	if why == "" {
		return nil
	}
	return fmt.Errorf("goredis: %w: %s", lockbridge.ErrInvalid, why)
}

// maxRedirects is how many times a cluster command that got a MOVED,
// TRYAGAIN or CLUSTERDOWN reply is sent again (after 5, 10, 20, 40 ms).
const maxRedirects = 4

type conn struct {
	c         redis.UniversalClient
	cluster   bool
	ring      bool
	deadlines bool  // go-redis applies context deadlines to its reads
	refused   error // the client resends: every call fails with it
}

func (c conn) Cluster() bool { return c.cluster }

func (c conn) Do(ctx context.Context, args ...any) (any, error) {
	if c.refused != nil {
		return nil, adapter.NotSent(c.refused)
	}
	if ctx.Done() == nil { // never cancelled: no need to watch it
		return c.do(ctx, args)
	}
	if _, ok := ctx.Deadline(); ok && c.deadlines {
		return c.do(ctx, args) // go-redis ends the call by the deadline itself
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	type result struct {
		v   any
		err error
	}
	ch := make(chan result, 1)
	go func() {
		v, err := c.do(ctx, args)
		ch <- result{v, err}
	}()
	select {
	case r := <-ch:
		return r.v, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (c conn) do(ctx context.Context, args []any) (any, error) {
	if !c.cluster {
		return reply(c.c.Do(ctx, args...).Result())
	}
	// With MaxRedirects -1 go-redis does not follow a redirect; these
	// replies come before Redis runs the command, so sending it again is
	// not a resend of anything that ran. go-redis reloads the slot map in
	// the background after a MOVED: give it a moment.
	for attempt := 0; ; attempt++ {
		v, err := reply(c.c.Do(ctx, args...).Result())
		if attempt == maxRedirects || !(errors.Is(err, driver.ErrMoved) || errors.Is(err, driver.ErrClusterDown)) || driver.HasPrefix(err, "ASK") {
			return v, err
		}
		t := time.NewTimer(time.Duration(5<<attempt) * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}

// reply normalises a go-redis reply.
func reply(v any, err error) (any, error) {
	if err != nil {
		if errors.Is(err, redis.Nil) {
			return nil, nil
		}
		var re redis.Error
		if errors.As(err, &re) {
			return nil, driver.ReplyError(re.Error())
		}
		return nil, notSent(err)
	}
	return normalise(v), nil
}

// notSent marks the errors go-redis returns before writing a command (a
// closed client, no connection from the pool, a failed dial): certainly
// not run.
func notSent(err error) error {
	var op *net.OpError
	if errors.Is(err, redis.ErrClosed) || errors.Is(err, redis.ErrPoolTimeout) ||
		errors.Is(err, redis.ErrPoolExhausted) || (errors.As(err, &op) && op.Op == "dial") {
		return adapter.NotSent(err)
	}
	return err
}

func normalise(v any) any {
	switch x := v.(type) {
	case []any:
		for i := range x {
			x[i] = normalise(x[i])
		}
		return v // the same slice, already boxed: returning x would box it again
	case []byte:
		return string(x)
	case map[any]any: // a RESP3 map: flattened as RESP2 sends it
		flat := make([]any, 0, 2*len(x))
		for k, v := range x {
			flat = append(flat, normalise(k), normalise(v))
		}
		return flat
	case bool: // a RESP3 boolean
		if x {
			return int64(1)
		}
		return nil
	}
	return v
}

func (c conn) Subscribe(ctx context.Context, channels ...string) (driver.Subscription, error) {
	if c.refused != nil {
		return nil, c.refused
	}
	var s driver.Subscription
	switch {
	case c.cluster:
		cc := c.c.(*redis.ClusterClient)
		s = adapter.NewGroupedSubscription(
			func(ch string) string { return fmt.Sprint(keyslot.Of(ch)) },
			func(ctx context.Context, ch string) (adapter.PubSubConn, error) {
				// Subscribe before the receive loop starts: the connection
				// then goes to the node serving ch, not to a random one.
				ps := cc.SSubscribe(ctx)
				if cc.Options().ReadOnly {
					// A ReadOnly client (RouteByLatency and RouteRandomly
					// set it too) subscribes on a replica, whose
					// subscribers the release script, run on the primary,
					// does not count: it would publish nothing to them.
					// Subscribe on the slot's primary instead.
					_ = ps.Close()
					m, err := cc.MasterForKey(ctx, ch)
					if err != nil {
						return nil, err
					}
					ps = m.SSubscribe(ctx)
				}
				if err := ps.SSubscribe(ctx, ch); err != nil {
					_ = ps.Close()
					return nil, err
				}
				return pubsub{ps: ps, sharded: true}, nil
			})
	case c.ring:
		r := c.c.(*redis.Ring)
		s = adapter.NewGroupedSubscription(
			func(ch string) string { tag, _ := keyslot.Tag(ch); return tag },
			func(ctx context.Context, ch string) (adapter.PubSubConn, error) {
				// A Ring picks the shard from the first channel and needs one.
				ps := r.Subscribe(ctx, ch)
				return pubsub{ps: ps}, nil
			})
	default:
		s = adapter.NewSubscription(pubsub{ps: c.c.Subscribe(ctx)})
	}
	if err := s.Subscribe(ctx, channels...); err != nil {
		_ = s.Close()
		return nil, err
	}
	return s, nil
}

// pubsub is a go-redis PubSub as a adapter.PubSubConn.
type pubsub struct {
	ps      *redis.PubSub
	sharded bool
}

func (p pubsub) Subscribe(ctx context.Context, channels ...string) error {
	if p.sharded {
		return p.ps.SSubscribe(ctx, channels...)
	}
	return p.ps.Subscribe(ctx, channels...)
}

func (p pubsub) Unsubscribe(ctx context.Context, channels ...string) error {
	if p.sharded {
		return p.ps.SUnsubscribe(ctx, channels...)
	}
	return p.ps.Unsubscribe(ctx, channels...)
}

func (p pubsub) Close() error { return p.ps.Close() }

func (p pubsub) Receive(ctx context.Context) (adapter.Event, error) {
	msg, err := p.ps.Receive(ctx)
	if err != nil {
		return adapter.Event{}, err
	}
	switch m := msg.(type) {
	case *redis.Message:
		return adapter.Event{Kind: adapter.EventMessage, Channel: m.Channel, Payload: m.Payload}, nil
	case *redis.Subscription:
		switch m.Kind {
		case "subscribe", "ssubscribe", "psubscribe":
			return adapter.Event{Kind: adapter.EventSubscribe, Channel: m.Channel}, nil
		case "unsubscribe", "sunsubscribe", "punsubscribe":
			return adapter.Event{Kind: adapter.EventUnsubscribe, Channel: m.Channel}, nil
		}
	}
	return adapter.Event{Kind: adapter.EventOther}, nil
}

// Pin binds a connection for driver.Client.EvalWait: one of a
// *redis.Client's pool (Client.Conn), or in a cluster one to the master
// serving key. Rings and other UniversalClients cannot pin.
func (c conn) Pin(ctx context.Context, key string) (adapter.Conn, func(), error) {
	if c.refused != nil {
		return nil, nil, c.refused
	}
	var cl *redis.Client
	switch x := c.c.(type) {
	case *redis.Client:
		cl = x
	case *redis.ClusterClient:
		m, err := x.MasterForKey(ctx, key)
		if err != nil {
			return nil, nil, err
		}
		cl = m
	default:
		return nil, nil, driver.ErrNoPin
	}
	rc := cl.Conn()
	return pinned{rc: rc, cluster: c.cluster}, func() { _ = rc.Close() }, nil
}

// pinned is one connection of a go-redis pool, as a adapter.Conn.
type pinned struct {
	rc      *redis.Conn
	cluster bool
}

func (p pinned) Cluster() bool { return p.cluster }

func (p pinned) Do(ctx context.Context, args ...any) (any, error) {
	cmd := redis.NewCmd(ctx, args...)
	_ = p.rc.Process(ctx, cmd)
	return reply(cmd.Result())
}

func (p pinned) Subscribe(context.Context, ...string) (driver.Subscription, error) {
	return nil, errors.New("goredis: no subscription on a pinned connection")
}
