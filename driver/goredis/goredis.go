package goredis

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/driver/adapter"
	"github.com/lockbridge/lockbridge/driver/keyslot"
)

// New returns the driver.Client for c.
//
// lockbridge never lets a lower layer send a command that changes lock
// state twice (a resent release can delete the next holder's lock), so c
// must not resend a command whose reply was lost: create it with
// MaxRetries: -1, and a ClusterClient also with MaxRedirects: -1 (its
// redirect loop resends after a broken connection or a timeout; the
// adapter follows MOVED, ASK, TRYAGAIN and CLUSTERDOWN replies itself,
// which Redis sends instead of running a command). A client that would resend, or a
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
		cn.cluster = x
		cn.nodes = &sync.Map{}
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
			why = fmt.Sprintf("the client resends a command whose reply was lost (MaxRetries %d): create it with "+
				"MaxRetries: -1", n)
		}
	case *redis.ClusterClient:
		o := x.Options()
		switch {
		case o.MaxRetries > 0:
			why = fmt.Sprintf("the cluster client resends a command whose reply was lost (MaxRetries %d): create it with "+
				"MaxRetries: -1 and MaxRedirects: -1", o.MaxRetries)
		case o.MaxRedirects > 0:
			why = fmt.Sprintf("the cluster client's redirect loop resends a command after a broken connection or a "+
				"timeout (MaxRedirects %d): create it with MaxRedirects: -1 (the adapter follows MOVED itself)", o.MaxRedirects)
		}
	case *redis.Ring:
		if n := x.Options().MaxRetries; n > 0 {
			why = fmt.Sprintf("the ring resends a command whose reply was lost (MaxRetries %d): "+
				"create it with MaxRetries: -1", n)
		}
	default:
		why = fmt.Sprintf("a %T: the adapter cannot tell whether it resends commands; pass a *redis.Client, "+
			"*redis.ClusterClient or *redis.Ring", c)
	}
	if why == "" {
		return nil
	}
	return fmt.Errorf("goredis: %w: %s", lockbridge.ErrInvalid, why)
}

type conn struct {
	c         redis.UniversalClient
	cluster   *redis.ClusterClient // nil unless c is one
	nodes     *sync.Map            // a cluster's master clients by address, for redirects
	ring      bool
	deadlines bool  // go-redis applies context deadlines to its reads
	refused   error // the client resends: every call fails with it
}

func (c conn) Cluster() bool { return c.cluster != nil }

// Do sends the command once. On a cluster, go-redis (MaxRedirects -1)
// returns a MOVED, ASK, TRYAGAIN or CLUSTERDOWN reply as it is: the
// driver.Client of adapter.Wrap follows it, through DoAt.
func (c conn) Do(ctx context.Context, args ...any) (any, error) {
	if c.refused != nil {
		return nil, adapter.NotSent(c.refused)
	}
	if c.onCaller(ctx) {
		return reply(c.c.Do(ctx, args...).Result())
	}
	return c.watch(ctx, func(ctx context.Context) (any, error) {
		return reply(c.c.Do(ctx, args...).Result())
	})
}

// onCaller reports whether a command under ctx may run on the caller's
// goroutine: ctx is never cancelled, or go-redis applies its deadline
// itself (ContextTimeoutEnabled). Otherwise watch runs it.
func (c conn) onCaller(ctx context.Context) bool {
	if ctx.Done() == nil {
		return true
	}
	_, ok := ctx.Deadline()
	return ok && c.deadlines
}

// watch runs send under a cancellable ctx: go-redis never interrupts a read
// on cancellation, so the command runs on another goroutine and watch
// returns ctx.Err() as soon as ctx ends.
func (c conn) watch(ctx context.Context, send func(context.Context) (any, error)) (any, error) {
	if c.onCaller(ctx) {
		return send(ctx)
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
		v, err := send(ctx)
		ch <- result{v, err}
	}()
	select {
	case r := <-ch:
		return r.v, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

var _ adapter.Redirector = conn{}

// DoAt sends the command to the master at addr, which a MOVED or ASK reply
// named — after ASKING, on the same connection, for an ASK — through the
// cluster client's own client for that node (as go-redis's redirect loop
// would, without that loop's resends).
func (c conn) DoAt(ctx context.Context, addr string, asking bool, args ...any) (any, error) {
	if c.cluster == nil {
		return nil, adapter.ErrNoRoute
	}
	return c.watch(ctx, func(ctx context.Context) (any, error) {
		node, err := c.node(ctx, addr)
		if err != nil {
			return nil, err
		}
		var v any
		if asking {
			pipe := node.Pipeline()
			_ = pipe.Process(ctx, redis.NewStatusCmd(ctx, "ASKING"))
			cmd := redis.NewCmd(ctx, args...)
			_ = pipe.Process(ctx, cmd)
			_, _ = pipe.Exec(ctx) // each command holds its own reply or error
			v, err = reply(cmd.Result())
		} else {
			v, err = reply(node.Do(ctx, args...).Result())
		}
		if errors.Is(err, redis.ErrClosed) {
			c.nodes.Delete(addr) // the cluster client dropped that node's client
		}
		return v, err
	})
}

// node returns the cluster client's client for the master at addr: from
// the cache, or from the masters of a freshly read slot map
// (ForEachMaster reads it). An address no master has is ErrNoRoute.
func (c conn) node(ctx context.Context, addr string) (*redis.Client, error) {
	if n, ok := c.nodes.Load(addr); ok {
		return n.(*redis.Client), nil
	}
	err := c.cluster.ForEachMaster(ctx, func(_ context.Context, m *redis.Client) error {
		c.nodes.Store(m.Options().Addr, m)
		return nil
	})
	if n, ok := c.nodes.Load(addr); ok {
		return n.(*redis.Client), nil
	}
	if err != nil {
		return nil, adapter.NotSent(fmt.Errorf("goredis: reading the slot map: %w (%w)", err, adapter.ErrNoRoute))
	}
	return nil, fmt.Errorf("goredis: no master at %s: %w", addr, adapter.ErrNoRoute)
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
	case c.cluster != nil:
		s = adapter.NewGroupedSubscription(func(ch string) string { return fmt.Sprint(keyslot.Of(ch)) }, c.openSharded)
	case c.ring:
		r := c.c.(*redis.Ring)
		s = adapter.NewGroupedSubscription(
			func(ch string) string { tag, _ := keyslot.Tag(ch); return tag },
			func(ctx context.Context, ch, _ string) (adapter.PubSubConn, error) {
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

// openSharded opens a cluster client's sharded subscription to ch on the
// slot's primary, or on the node at addr when a MOVED reply named it.
func (c conn) openSharded(ctx context.Context, ch, addr string) (adapter.PubSubConn, error) {
	cc := c.cluster
	if addr != "" {
		// A MOVED reply named the slot's node: go there, whatever the
		// client's slot map still says.
		m, err := c.node(ctx, addr)
		if err != nil {
			return nil, err
		}
		ps := m.SSubscribe(ctx)
		if err := ps.SSubscribe(ctx, ch); err != nil {
			_ = ps.Close()
			return nil, err
		}
		return pubsub{ps: ps, sharded: true}, nil
	}
	// Subscribe before the receive loop starts: the connection then goes
	// to the node serving ch, not to a random one.
	ps := cc.SSubscribe(ctx)
	if cc.Options().ReadOnly {
		// A ReadOnly client (RouteByLatency and RouteRandomly set it too)
		// subscribes on a replica, whose subscribers the release script,
		// run on the primary, does not count: it would publish nothing to
		// them. Subscribe on the slot's primary instead.
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
		var re redis.Error
		if errors.As(err, &re) {
			// A refused SSUBSCRIBE (MOVED: the slot is elsewhere); the
			// connection stays usable.
			return adapter.Event{}, driver.ReplyError(re.Error())
		}
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
	cluster *redis.ClusterClient // nil unless pinned in a cluster
}

func (p pinned) Cluster() bool { return p.cluster != nil }

func (p pinned) Do(ctx context.Context, args ...any) (any, error) {
	cmd := redis.NewCmd(ctx, args...)
	_ = p.rc.Process(ctx, cmd)
	v, err := reply(cmd.Result())
	if p.cluster != nil && driver.HasPrefix(err, "MOVED") {
		// The connection was pinned by a stale slot map: EvalWait pins
		// again after a pause; let the cluster client read the map anew.
		p.cluster.ReloadState(ctx)
	}
	return v, err
}

func (p pinned) Subscribe(context.Context, ...string) (driver.Subscription, error) {
	return nil, errors.New("goredis: no subscription on a pinned connection")
}
