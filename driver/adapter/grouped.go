package adapter

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/lockbridge/lockbridge/driver"
)

// moveTimeout bounds how long a grouped subscription takes to follow a
// slot to its new owner (see NewGroupedSubscription); past it the whole
// subscription ends with the error.
const moveTimeout = 5 * time.Second

// NewGroupedSubscription is a driver.Subscription over several connections,
// one per group of channels, for clients that must subscribe where a channel
// lives: per hash slot for sharded pub/sub in Redis Cluster, per hash tag on
// a client-side sharded Ring. group names a channel's group; open opens the
// connection for a group, given its first channel and, when not "", the
// address of the node to open it on (a MOVED reply named it; open may
// ignore it, or fail with an error wrapping ErrNoRoute when it has no client
// for it). Connections open on first use. When any of them is lost, the
// whole subscription ends with that error.
//
// A group's slot may move to another node (a resharding). The node that
// served it then drops the slot's channels (SUNSUBSCRIBE sent by the
// server), and a SSUBSCRIBE sent to it is refused with MOVED. Either way the
// subscription opens the group's connection anew, where the slot lives now
// (following MOVED, and pausing through TRYAGAIN and CLUSTERDOWN: see
// MaxRedirects and ClusterRetryFor), subscribes all its channels there,
// closes the old connection, and delivers, for each channel it had, a
// driver.Message with Moved set: a message published meanwhile may have been
// missed. A move that does not succeed within moveTimeout ends the
// subscription with its error.
func NewGroupedSubscription(group func(channel string) string, open func(ctx context.Context, channel,
	addr string) (PubSubConn, error)) driver.Subscription {
	return &grouped{
		group:  group,
		open:   open,
		parts:  map[string]*subscription{},
		chans:  map[string]map[string]bool{},
		moving: map[string]*subscription{},
		msgs:   make(chan driver.Message, messageBuffer),
		stop:   make(chan struct{}),
	}
}

type grouped struct {
	group func(string) string
	open  func(context.Context, string, string) (PubSubConn, error)
	msgs  chan driver.Message
	stop  chan struct{} // closed by end
	wg    sync.WaitGroup

	mu     sync.Mutex
	parts  map[string]*subscription
	chans  map[string]map[string]bool // part → its channels (subscribed or being subscribed)
	moving map[string]*subscription   // part → the connection a move is on its way for
	ended  bool
	err    error
	// opened serialises opening, subscribing, moving and closing parts.
	opened sync.Mutex
}

func (g *grouped) Messages() <-chan driver.Message { return g.msgs }

func (g *grouped) Err() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.err
}

// part returns the connection of channel's group, opening it if needed.
// The caller holds g.opened.
func (g *grouped) part(ctx context.Context, channel string) (*subscription, error) {
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
	pc, err := g.open(ctx, channel, "")
	if err != nil {
		return nil, fmt.Errorf("driver: subscribe: %w", err)
	}
	p = newSubscription(pc, g.dropped(name))
	if !g.install(name, nil, p) {
		return nil, fmt.Errorf("driver: subscribe: %w", errClosed)
	}
	return p, nil
}

// install makes p the connection of group name in place of old (nil: none),
// and starts forwarding its messages. It reports false, closing p, when the
// subscription has ended or old is no longer the group's connection.
func (g *grouped) install(name string, old, p *subscription) bool {
	g.mu.Lock()
	if g.ended || g.parts[name] != old {
		g.mu.Unlock()
		_ = p.Close()
		return false
	}
	g.parts[name] = p
	if g.chans[name] == nil {
		g.chans[name] = map[string]bool{}
	}
	if p.gone {
		// Its node dropped a channel before p was the group's connection
		// (the slot moved on while p was being opened): follow it again.
		g.follow(name, p)
	}
	g.wg.Add(1)
	g.mu.Unlock()
	go g.forward(p)
	return true
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
	byPart := map[string][]string{}
	var added []string
	for _, ch := range channels {
		p, err := g.part(ctx, ch)
		if err != nil {
			g.forget(added)
			return err
		}
		name := g.group(ch)
		byPart[name] = append(byPart[name], ch)
		// Marked before the SSUBSCRIBE, so that a slot's channels dropped
		// by the server right after the confirmation are followed.
		g.mu.Lock()
		if set := g.chans[name]; set != nil && !set[ch] && g.parts[name] == p {
			set[ch] = true
			added = append(added, ch)
		}
		g.mu.Unlock()
	}
	for name, chs := range byPart {
		if err := g.subscribePart(ctx, name, chs); err != nil {
			g.forget(added)
			return err
		}
	}
	return nil
}

// subscribePart subscribes chs, all of group name, on its connection; when
// the node refuses (the slot is elsewhere), it moves the group there.
func (g *grouped) subscribePart(ctx context.Context, name string, chs []string) error {
	g.mu.Lock()
	p := g.parts[name]
	g.mu.Unlock()
	if p == nil {
		return fmt.Errorf("driver: subscribe: %w", errClosed)
	}
	err := p.Subscribe(ctx, chs...)
	if k, _ := redirectOf(err); k == notRedirect {
		return err
	}
	return g.move(ctx, name, p, err, chs)
}

// forget unmarks channels whose Subscribe failed.
func (g *grouped) forget(channels []string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, ch := range channels {
		delete(g.chans[g.group(ch)], ch)
	}
}

// dropped returns the hook of group name's connections: a channel the
// server says is no longer subscribed, which the subscription still wants,
// was dropped by the server — its slot moved — and the group follows it.
// A connection not yet the group's (a move still installing it) is marked,
// and followed once installed.
func (g *grouped) dropped(name string) func(*subscription, string) {
	return func(p *subscription, ch string) {
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.ended || !g.chans[name][ch] {
			return // an unsubscribe of ours
		}
		p.gone = true
		if g.parts[name] == p {
			g.follow(name, p)
		}
	}
}

// follow moves group name, whose connection p lost its channels, unless a
// move for p is on its way already. The caller holds g.mu.
func (g *grouped) follow(name string, p *subscription) {
	if g.moving[name] == p {
		return
	}
	g.moving[name] = p // a move for an older connection finds it replaced, and does nothing
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		ctx, cancel := context.WithTimeout(context.Background(), moveTimeout)
		defer cancel()
		go func() {
			select {
			case <-g.stop:
				cancel()
			case <-ctx.Done():
			}
		}()
		g.opened.Lock()
		defer g.opened.Unlock()
		g.mu.Lock()
		if g.moving[name] == p {
			delete(g.moving, name)
		}
		g.mu.Unlock()
		_ = g.move(ctx, name, p, nil, nil) // a failure ends the subscription
	}()
}

// move opens group name's connection anew — at the node that cause, a
// refusal, names, or else where the client's slot map says — and puts it in
// place of old, with all the group's channels subscribed, then wakes each
// channel old had (all but fresh, being subscribed by the caller) with a
// Moved message. The caller holds g.opened.
func (g *grouped) move(ctx context.Context, name string, old *subscription, cause error, fresh []string) error {
	g.mu.Lock()
	if g.ended || g.parts[name] != old {
		g.mu.Unlock()
		return nil // closed, or moved already
	}
	chs := make([]string, 0, len(g.chans[name]))
	for ch := range g.chans[name] {
		chs = append(chs, ch)
	}
	g.mu.Unlock()
	_ = old.Close() // its node serves the slot no longer
	if len(chs) == 0 {
		g.mu.Lock()
		if g.parts[name] == old {
			delete(g.parts, name)
			delete(g.chans, name)
		}
		g.mu.Unlock()
		return nil
	}
	p, err := g.reopen(ctx, name, chs, cause)
	if err != nil {
		// Its channels have no connection now: the subscription ends, and
		// its user learns it (a waiter polls).
		err = fmt.Errorf("driver: subscription: following the slot of %q to its new node: %w", chs[0], err)
		go g.end(err) // end waits for the move goroutines, which wait for g.opened
		return err
	}
	if !g.install(name, old, p) {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.ended { // under g.mu: end closes msgs only after it set ended
		for _, ch := range chs {
			if slices.Contains(fresh, ch) {
				continue
			}
			select {
			case g.msgs <- driver.Message{Channel: ch, Moved: true}:
			default:
			}
		}
	}
	return nil
}

// reopen opens a connection for group name and subscribes chs on it,
// following MOVED replies (starting from cause, when not nil) and pausing
// through the other refusals, within the bounds of a command.
func (g *grouped) reopen(ctx context.Context, name string, chs []string, cause error) (*subscription, error) {
	var f follower
	err := cause
	for {
		addr := ""
		if err != nil {
			a, _, again, stop := f.next(ctx, err, true)
			switch {
			case stop != nil:
				return nil, stop
			case !again:
				return nil, err
			}
			addr = a
		}
		pc, oerr := g.open(ctx, chs[0], addr)
		if oerr != nil {
			if errors.Is(oerr, ErrNoRoute) && err != nil {
				f.noRoute = true // err stays the refusal: pause, then open by the slot map
				continue
			}
			return nil, oerr
		}
		p := newSubscription(pc, g.dropped(name))
		serr := p.Subscribe(ctx, chs...)
		if serr == nil {
			return p, nil
		}
		_ = p.Close()
		if k, _ := redirectOf(serr); k == notRedirect {
			return nil, serr
		}
		err = serr
	}
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
	close(g.stop)
	parts := g.parts
	g.parts, g.chans = map[string]*subscription{}, map[string]map[string]bool{}
	g.mu.Unlock()
	var errs []error
	for _, p := range parts {
		errs = append(errs, p.Close())
	}
	g.wg.Wait()
	close(g.msgs)
	return errors.Join(errs...)
}
