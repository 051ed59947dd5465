package adapter

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/lockbridge/lockbridge/driver"
)

// NewGroupedSubscription is a driver.Subscription over several connections, one per
// group of channels, for clients that must subscribe where a channel lives:
// per hash slot for sharded pub/sub in Redis Cluster, per hash tag on a
// client-side sharded Ring. group names a channel's group; open opens the
// connection for a group, given its first channel. Connections open on first
// use. When any of them is lost, the whole subscription ends with that error.
func NewGroupedSubscription(group func(channel string) string, open func(ctx context.Context, channel string) (PubSubConn, error)) driver.Subscription {
	return &grouped{
		group: group,
		open:  open,
		parts: map[string]driver.Subscription{},
		chans: map[string]map[string]bool{},
		msgs:  make(chan driver.Message, MessageBuffer),
		stop:  make(chan struct{}),
	}
}

type grouped struct {
	group func(string) string
	open  func(context.Context, string) (PubSubConn, error)
	msgs  chan driver.Message
	stop  chan struct{} // closed by end
	wg    sync.WaitGroup

	mu     sync.Mutex
	parts  map[string]driver.Subscription
	chans  map[string]map[string]bool // part → its subscribed channels
	ended  bool
	err    error
	opened sync.Mutex // serialises opening, subscribing and closing parts
}

func (g *grouped) Messages() <-chan driver.Message { return g.msgs }

func (g *grouped) Err() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.err
}

// part returns the connection of channel's group, opening it if needed.
// The caller holds g.opened.
func (g *grouped) part(ctx context.Context, channel string) (driver.Subscription, error) {
	name := g.group(channel)
	g.mu.Lock()
	if g.ended {
		err := g.err
		g.mu.Unlock()
		return nil, fmt.Errorf("driver: subscribe on a closed subscription: %w", errors.Join(errClosed, err))
	}
	p, ok := g.parts[name]
	g.mu.Unlock()
	if ok {
		return p, nil
	}
	pc, err := g.open(ctx, channel)
	if err != nil {
		return nil, fmt.Errorf("driver: subscribe: %w", err)
	}
	p = NewSubscription(pc)
	g.mu.Lock()
	if g.ended {
		g.mu.Unlock()
		_ = p.Close()
		return nil, fmt.Errorf("driver: subscribe: %w", errClosed)
	}
	g.parts[name] = p
	g.chans[name] = map[string]bool{}
	g.wg.Add(1)
	g.mu.Unlock()
	go g.forward(p)
	return p, nil
}

// forward copies one part's messages; when the part ends on its own, the
// whole subscription ends.
func (g *grouped) forward(p driver.Subscription) {
	defer g.wg.Done()
	for m := range p.Messages() {
		select {
		case g.msgs <- m:
		default:
		}
	}
	if err := p.Err(); err != nil {
		go g.end(err) // end waits for the forwarders, this one included
	}
}

func (g *grouped) Subscribe(ctx context.Context, channels ...string) error {
	g.opened.Lock()
	defer g.opened.Unlock()
	byPart := map[driver.Subscription][]string{}
	for _, ch := range channels {
		p, err := g.part(ctx, ch)
		if err != nil {
			return err
		}
		byPart[p] = append(byPart[p], ch)
	}
	for p, chs := range byPart {
		if err := p.Subscribe(ctx, chs...); err != nil {
			return err
		}
	}
	g.mu.Lock()
	for _, ch := range channels {
		if set := g.chans[g.group(ch)]; set != nil {
			set[ch] = true
		}
	}
	g.mu.Unlock()
	return nil
}

// Unsubscribe removes channels; a connection left with no channel is
// closed, so a long-lived subscription over many slots keeps open only the
// connections it uses.
func (g *grouped) Unsubscribe(ctx context.Context, channels ...string) error {
	g.opened.Lock()
	defer g.opened.Unlock()
	for _, ch := range channels {
		name := g.group(ch)
		g.mu.Lock()
		p, ok := g.parts[name]
		set := g.chans[name]
		delete(set, ch)
		idle := ok && len(set) == 0
		if idle {
			delete(g.parts, name)
			delete(g.chans, name)
		}
		g.mu.Unlock()
		switch {
		case idle:
			if err := p.Close(); err != nil {
				return err
			}
		case ok:
			if err := p.Unsubscribe(ctx, ch); err != nil {
				return err
			}
		}
	}
	return nil
}

func (g *grouped) Close() error { return g.end(nil) }

func (g *grouped) end(cause error) error {
	g.mu.Lock()
	if g.ended {
		g.mu.Unlock()
		return nil
	}
	g.ended = true
	g.err = cause
	parts := g.parts
	g.parts, g.chans = map[string]driver.Subscription{}, map[string]map[string]bool{}
	g.mu.Unlock()
	var errs []error
	for _, p := range parts {
		errs = append(errs, p.Close())
	}
	g.wg.Wait()
	close(g.msgs)
	return errors.Join(errs...)
}
