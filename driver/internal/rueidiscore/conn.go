package rueidiscore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/driver/adapter"
	"github.com/lockbridge/lockbridge/driver/keyslot"
)

// Backend is what an adapter provides over its library's client.
type Backend interface {
	// Cluster reports whether the client is a cluster client.
	Cluster() bool
	// Do sends cmd once, built as a command the library never retries
	// (Arbitrary(…).Build(): not ReadOnly), routed by its key. The reply
	// comes normalised (Normalise); an error reply as a driver.ReplyError.
	// In a cluster the library follows MOVED and ASK itself; TRYAGAIN and
	// CLUSTERDOWN come back as replies, which the driver.Client of Wrap
	// follows (adapter.ClusterRetryFor).
	Do(ctx context.Context, cmd Command) (any, error)
	// Dedicate takes a connection of its own from the client (Dedicate);
	// release gives it back.
	Dedicate() (d Dedicated, release func())
	// DedicateAt is Dedicate on the cluster node at addr (the client of
	// Nodes()[addr]); ok is false when the client has none for addr.
	DedicateAt(addr string) (d Dedicated, release func(), ok bool)
}

// Dedicated is one connection taken from the client.
type Dedicated interface {
	// Do is Backend.Do on this connection. In a cluster the first command
	// with a key binds it to that key's node.
	Do(ctx context.Context, cmd Command) (any, error)
	// Hooks installs the pub/sub handlers (SetPubSubHooks); the channel
	// gets at most one error and is closed when they will not be called
	// any more.
	Hooks(onMessage func(channel, payload string), onSubscription func(kind, channel string)) <-chan error
	// Subscribe sends SUBSCRIBE, or SSUBSCRIBE when sharded. An error reply
	// (MOVED: the slot is elsewhere) comes as a driver.ReplyError.
	Subscribe(ctx context.Context, sharded bool, channels []string) error
	// Unsubscribe sends UNSUBSCRIBE, or SUNSUBSCRIBE when sharded.
	Unsubscribe(ctx context.Context, sharded bool, channels []string) error
	// Close closes the connection and gives it back.
	Close()
}

// Wrap returns the driver.Client over b. A non-nil refused makes every call
// fail with it, before anything is sent.
func Wrap(b Backend, refused error) driver.Client {
	return adapter.Wrap(conn{b: b, refused: refused})
}

type conn struct {
	b       Backend
	refused error
}

func (c conn) Cluster() bool { return c.refused == nil && c.b.Cluster() }

func (c conn) Do(ctx context.Context, args ...any) (any, error) {
	if c.refused != nil {
		return nil, adapter.NotSent(c.refused)
	}
	return do(ctx, c.b, args)
}

var (
	_ adapter.WordsConn = conn{}
	_ adapter.WordsConn = pinned{}
)

// DoWords is Do for words already strings (adapter.WordsConn).
func (c conn) DoWords(ctx context.Context, words []string) (any, error) {
	if c.refused != nil {
		return nil, adapter.NotSent(c.refused)
	}
	cmd, err := WordsCommand(words)
	if err != nil {
		return nil, adapter.NotSent(err)
	}
	return send(ctx, c.b, cmd)
}

// sender is a Backend or a Dedicated: what sends one command.
type sender interface {
	Do(ctx context.Context, cmd Command) (any, error)
}

func do(ctx context.Context, s sender, args []any) (any, error) {
	cmd, err := NewCommand(args)
	if err != nil {
		return nil, adapter.NotSent(err)
	}
	return send(ctx, s, cmd)
}

// send sends cmd with s and frees it.
func send(ctx context.Context, s sender, cmd Command) (any, error) {
	if _, ok := ctx.Deadline(); ok || ctx.Done() == nil {
		v, err := s.Do(ctx, cmd)
		cmd.free() // built and sent: the client holds a copy of its own
		return v, sendError(err)
	}
	// A context that can end but has no deadline: a pooled connection
	// without a pipeline (DisableAutoPipelining) writes and reads on the
	// caller's goroutine and would not see it end (until ConnWriteTimeout),
	// so the command runs on a goroutine of its own and the caller returns
	// when ctx ends. A pipelined connection watches ctx itself; with a
	// deadline the client sets it on the socket.
	type result struct {
		v   any
		err error
	}
	ch := make(chan result, 1)
	go func(cmd Command) { // by value: captured, cmd would be on the heap in every call
		v, err := s.Do(ctx, cmd)
		cmd.free()
		ch <- result{v, err}
	}(cmd)
	select {
	case r := <-ch:
		return r.v, sendError(r.err)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Subscribe opens plain pub/sub on one dedicated connection, or in a
// cluster sharded pub/sub (SSUBSCRIBE) on one dedicated connection per hash
// slot in use, each on the node serving its slot.
func (c conn) Subscribe(ctx context.Context, channels ...string) (driver.Subscription, error) {
	if c.refused != nil {
		return nil, c.refused
	}
	var s driver.Subscription
	if c.b.Cluster() {
		s = adapter.NewGroupedSubscription(
			func(ch string) string { return strconv.Itoa(keyslot.Of(ch)) },
			func(_ context.Context, _, addr string) (adapter.PubSubConn, error) {
				if addr == "" {
					// The connection goes to the slot's node, by the
					// client's slot map, with its first SSUBSCRIBE.
					d, _ := c.b.Dedicate() // Close gives it back
					return newPubSub(d, true), nil
				}
				// A MOVED reply named the node: the client's slot map may
				// not know it yet (it is read again after a random delay
				// of up to a second).
				d, _, ok := c.b.DedicateAt(addr)
				if !ok {
					return nil, fmt.Errorf("no connection to %s: %w", addr, adapter.ErrNoRoute)
				}
				return newPubSub(d, true), nil
			})
	} else {
		d, _ := c.b.Dedicate() // Close gives it back
		s = adapter.NewSubscription(newPubSub(d, false))
	}
	if err := s.Subscribe(ctx, channels...); err != nil {
		_ = s.Close()
		return nil, err
	}
	return s, nil
}

// Pin takes a dedicated connection for driver.Client.EvalWait: in a cluster
// its first command (the script, whose first key is key) binds it to the
// node serving key, and WAIT follows on the same connection.
func (c conn) Pin(_ context.Context, _ string) (adapter.Conn, func(), error) {
	if c.refused != nil {
		return nil, nil, c.refused
	}
	d, release := c.b.Dedicate()
	return pinned{d: d, cluster: c.b.Cluster()}, release, nil
}

// pinned is one dedicated connection, as an adapter.Conn.
type pinned struct {
	d       Dedicated
	cluster bool
}

func (p pinned) Cluster() bool { return p.cluster }

func (p pinned) Do(ctx context.Context, args ...any) (any, error) {
	return do(ctx, p.d, args)
}

func (p pinned) DoWords(ctx context.Context, words []string) (any, error) {
	cmd, err := WordsCommand(words)
	if err != nil {
		return nil, adapter.NotSent(err)
	}
	return send(ctx, p.d, cmd)
}

func (pinned) Subscribe(context.Context, ...string) (driver.Subscription, error) {
	return nil, errors.New("no subscription on a pinned connection")
}

// pubsub is a dedicated connection as an adapter.PubSubConn: the client's
// hooks deliver the events, which Receive hands on one at a time.
type pubsub struct {
	d       Dedicated
	sharded bool
	events  chan adapter.Event
	lost    <-chan error
	closed  chan struct{}
	close   sync.Once
}

// newPubSub is a pub/sub connection on d, which its Close closes (and so
// gives back).
func newPubSub(d Dedicated, sharded bool) *pubsub {
	p := &pubsub{d: d, sharded: sharded, events: make(chan adapter.Event), closed: make(chan struct{})}
	p.lost = d.Hooks(
		func(ch, payload string) {
			p.deliver(adapter.Event{Kind: adapter.EventMessage, Channel: ch, Payload: payload})
		},
		func(kind, ch string) {
			switch kind {
			case "subscribe", "ssubscribe":
				p.deliver(adapter.Event{Kind: adapter.EventSubscribe, Channel: ch})
			case "unsubscribe", "sunsubscribe":
				p.deliver(adapter.Event{Kind: adapter.EventUnsubscribe, Channel: ch})
			}
		})
	return p
}

// deliver runs on the client's reader: it waits for Receive, or for Close.
func (p *pubsub) deliver(ev adapter.Event) {
	select {
	case p.events <- ev:
	case <-p.closed:
	}
}

func (p *pubsub) Subscribe(ctx context.Context, channels ...string) error {
	return sendError(p.d.Subscribe(ctx, p.sharded, channels))
}

func (p *pubsub) Unsubscribe(ctx context.Context, channels ...string) error {
	return sendError(p.d.Unsubscribe(ctx, p.sharded, channels))
}

var errClosed = errors.New("pub/sub connection closed")

func (p *pubsub) Receive(context.Context) (adapter.Event, error) {
	select {
	case ev := <-p.events:
		return ev, nil
	case err, ok := <-p.lost:
		if !ok || err == nil {
			err = errClosed
		}
		return adapter.Event{}, fmt.Errorf("pub/sub connection lost: %w", err)
	case <-p.closed:
		return adapter.Event{}, errClosed
	}
}

func (p *pubsub) Close() error {
	p.close.Do(func() {
		close(p.closed)
		p.d.Close()
	})
	return nil
}
