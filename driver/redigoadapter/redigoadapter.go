package redigoadapter

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/driver/adapter"
)

// ConnSource hands out connections; *redis.Pool is one.
type ConnSource interface {
	GetContext(ctx context.Context) (redis.Conn, error)
}

// defaultPubSubPing is how often a subscription's connection is pinged.
const defaultPubSubPing = time.Second

// Option configures the adapter.
type Option func(*conn)

// PubSubPing sets how often an idle subscription connection sends PING, so
// that a read timeout on the pool's connections (redis.DialReadTimeout)
// does not end it: set it below that timeout. Default 1 s; a value <= 0
// keeps the default.
func PubSubPing(d time.Duration) Option {
	return func(c *conn) {
		if d > 0 {
			c.ping = d
		}
	}
}

// New returns the driver.Client for connections from src.
func New(src ConnSource, opts ...Option) driver.Client {
	c := conn{src: src, ping: defaultPubSubPing}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	return adapter.Wrap(c)
}

type conn struct {
	src  ConnSource
	ping time.Duration
}

func (c conn) Cluster() bool { return false }

func (c conn) Do(ctx context.Context, args ...any) (any, error) {
	if len(args) == 0 {
		return nil, adapter.NotSent(errors.New("redigo: empty command"))
	}
	rc, err := c.src.GetContext(ctx)
	if err != nil {
		return nil, adapter.NotSent(err) // no connection: nothing was sent
	}
	defer rc.Close()
	// redigo sends a command once and never resends it.
	return pinned{rc}.Do(ctx, args...)
}

func normalise(v any) (any, error) {
	switch x := v.(type) {
	case []byte:
		return string(x), nil
	case []any:
		for i := range x {
			n, err := normalise(x[i])
			if err != nil {
				return nil, err
			}
			x[i] = n
		}
		return v, nil // the same slice, already boxed: returning x would box it again
	case redis.Error: // an error inside an array reply
		return nil, driver.ReplyError(x.Error())
	}
	return v, nil
}

func (c conn) Subscribe(ctx context.Context, channels ...string) (driver.Subscription, error) {
	rc, err := c.src.GetContext(ctx)
	if err != nil {
		return nil, err
	}
	pctx, cancel := context.WithCancel(context.Background())
	ps := &pubsub{psc: redis.PubSubConn{Conn: rc}, ctx: pctx, cancel: cancel, pinged: make(chan struct{})}
	go ps.pinger(c.ping)
	s := adapter.NewSubscription(ps)
	if err := s.Subscribe(ctx, channels...); err != nil {
		_ = s.Close()
		return nil, err
	}
	return s, nil
}

// pubsub is a redigo PubSubConn as a adapter.PubSubConn. redigo allows one
// sender and one receiver at a time: mu serialises the senders. Close cancels
// ctx, which makes a blocked receive close the network connection and return,
// and waits for it (rmu) before handing the connection back to its source.
type pubsub struct {
	mu     sync.Mutex
	rmu    sync.Mutex
	psc    redis.PubSubConn
	ctx    context.Context
	cancel context.CancelFunc
	pinged chan struct{} // closed when the pinger has stopped
}

// pinger sends PING every d until the subscription ends; the PONG comes
// back as an event the subscription ignores.
func (p *pubsub) pinger(d time.Duration) {
	defer close(p.pinged)
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-p.ctx.Done():
			return
		case <-t.C:
			p.mu.Lock()
			err := p.psc.Ping("")
			p.mu.Unlock()
			if err != nil {
				return // the connection is gone; Receive reports it
			}
		}
	}
}

func (p *pubsub) Subscribe(_ context.Context, channels ...string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.psc.Subscribe(strings(channels)...)
}

func (p *pubsub) Unsubscribe(_ context.Context, channels ...string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.psc.Unsubscribe(strings(channels)...)
}

func (p *pubsub) Close() error {
	p.cancel()
	<-p.pinged
	p.rmu.Lock()
	defer p.rmu.Unlock()
	p.mu.Lock()
	defer p.mu.Unlock()
	// The cancel has closed the network connection on purpose: the errors of
	// the pool's UNSUBSCRIBE clean-up on it say nothing.
	_ = p.psc.Close()
	return nil
}

func (p *pubsub) Receive(context.Context) (adapter.Event, error) {
	p.rmu.Lock()
	defer p.rmu.Unlock()
	switch m := p.psc.ReceiveContext(p.ctx).(type) {
	case redis.Message:
		return adapter.Event{Kind: adapter.EventMessage, Channel: m.Channel, Payload: string(m.Data)}, nil
	case redis.Subscription:
		switch m.Kind {
		case "subscribe":
			return adapter.Event{Kind: adapter.EventSubscribe, Channel: m.Channel}, nil
		case "unsubscribe":
			return adapter.Event{Kind: adapter.EventUnsubscribe, Channel: m.Channel}, nil
		}
	case error:
		return adapter.Event{}, m
	}
	return adapter.Event{Kind: adapter.EventOther}, nil
}

func strings(s []string) []any {
	a := make([]any, len(s))
	for i, v := range s {
		a[i] = v
	}
	return a
}

// Pin binds one connection of the source for driver.Client.EvalWait.
func (c conn) Pin(ctx context.Context, _ string) (adapter.Conn, func(), error) {
	rc, err := c.src.GetContext(ctx)
	if err != nil {
		return nil, nil, err
	}
	return pinned{rc}, func() { _ = rc.Close() }, nil
}

// pinned is one redigo connection, as a adapter.Conn.
type pinned struct{ rc redis.Conn }

func (pinned) Cluster() bool { return false }

func (p pinned) Do(ctx context.Context, args ...any) (any, error) {
	if len(args) == 0 {
		return nil, errors.New("redigo: empty command")
	}
	cmd, ok := args[0].(string)
	if !ok {
		return nil, errors.New("redigo: command name must be a string")
	}
	var (
		v   any
		err error
	)
	if ctx.Done() == nil {
		// A context that can never end (context.Background()): redigo's
		// DoContext would run the command on a goroutine of its own to watch
		// for an end that cannot come, a goroutine start and two wake-ups per
		// command. Conn.Do is the same command with the same read timeout
		// (the pool's DialReadTimeout), on the caller's goroutine.
		v, err = p.rc.Do(cmd, args[1:]...)
	} else {
		v, err = redis.DoContext(p.rc, ctx, cmd, args[1:]...)
	}
	if err != nil {
		var re redis.Error
		if errors.As(err, &re) {
			return nil, driver.ReplyError(re.Error())
		}
		return nil, err
	}
	return normalise(v)
}

func (pinned) Subscribe(context.Context, ...string) (driver.Subscription, error) {
	return nil, errors.New("redigo: no subscription on a pinned connection")
}
