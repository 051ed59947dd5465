package adapter

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/lockbridge/lockbridge/driver"
)

// EventKind tells what a PubSubConn received.
type EventKind int

// The kinds of pub/sub events.
const (
	EventMessage     EventKind = iota + 1 // a message on a channel
	EventSubscribe                        // a SUBSCRIBE or SSUBSCRIBE confirmation
	EventUnsubscribe                      // an UNSUBSCRIBE or SUNSUBSCRIBE confirmation
	EventOther                            // anything else (a PONG, …): ignored
)

// Event is what PubSubConn.Receive returns.
type Event struct {
	Kind             EventKind
	Channel, Payload string
}

// PubSubConn is the adapter's side of one pub/sub connection: it sends
// (S)SUBSCRIBE and (S)UNSUBSCRIBE and receives events. NewSubscription builds
// a driver.Subscription on it.
type PubSubConn interface {
	Subscribe(ctx context.Context, channels ...string) error
	Unsubscribe(ctx context.Context, channels ...string) error
	// Receive blocks until the next event or an error (Close makes it
	// fail). An error reply (a driver.ReplyError: a refused SSUBSCRIBE, say
	// MOVED) fails the Subscribe calls waiting for their confirmation and
	// leaves the connection open; any other error ends it.
	Receive(ctx context.Context) (Event, error)
	Close() error
}

// messageBuffer is the capacity of driver.Subscription.Messages.
const messageBuffer = 256

// NewSubscription runs pc's receive loop in a goroutine, which ends with
// Close or when the connection fails.
func NewSubscription(pc PubSubConn) driver.Subscription {
	return newSubscription(pc, nil)
}

// newSubscription is NewSubscription; unsubscribed, when not nil, is called
// (on the receive loop: it must not block) with the subscription and each
// channel the server says is no longer subscribed — one the caller
// unsubscribed, or one the server dropped, as a cluster node does for the
// channels of a slot it hands over.
func newSubscription(pc PubSubConn, unsubscribed func(s *subscription, channel string)) *subscription {
	s := &subscription{
		pc:           pc,
		unsubscribed: unsubscribed,
		msgs:         make(chan driver.Message, messageBuffer),
		pending:      map[string][]*pendingSub{},
		done:         make(chan struct{}),
	}
	go s.loop()
	return s
}

type subscription struct {
	pc           PubSubConn
	unsubscribed func(*subscription, string)
	msgs         chan driver.Message
	done         chan struct{} // closed when the receive loop ended

	mu      sync.Mutex
	pending map[string][]*pendingSub // channel → Subscribe calls waiting for its confirmation
	closed  bool
	err     error

	// gone: the server dropped a channel that the grouped subscription
	// owning this connection wants (guarded by that grouped's mu).
	gone bool
}

// pendingSub is a Subscribe call waiting for a channel's confirmation: done
// is closed when it came, or when the server refused (err).
type pendingSub struct {
	done chan struct{}
	err  error
}

func (s *subscription) Messages() <-chan driver.Message { return s.msgs }

func (s *subscription) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

func (s *subscription) Subscribe(ctx context.Context, channels ...string) error {
	if len(channels) == 0 {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("driver: subscribe: %w", err)
	}
	waits := make([]*pendingSub, len(channels))
	s.mu.Lock()
	if s.closed || s.err != nil {
		err := s.err
		s.mu.Unlock()
		return fmt.Errorf("driver: subscribe on a closed subscription: %w", errors.Join(errClosed, err))
	}
	for i, ch := range channels {
		w := &pendingSub{done: make(chan struct{})}
		waits[i] = w
		s.pending[ch] = append(s.pending[ch], w)
	}
	s.mu.Unlock()
	if err := s.pc.Subscribe(ctx, channels...); err != nil {
		return fmt.Errorf("driver: subscribe: %w", err)
	}
	for _, w := range waits {
		select {
		case <-w.done:
			if w.err != nil {
				return fmt.Errorf("driver: subscribe: %w", w.err)
			}
		case <-s.done:
			return fmt.Errorf("driver: subscribe: %w", errors.Join(errClosed, s.Err()))
		case <-ctx.Done():
			return fmt.Errorf("driver: subscribe: %w", ctx.Err())
		}
	}
	return nil
}

var errClosed = errors.New("subscription closed")

func (s *subscription) Unsubscribe(ctx context.Context, channels ...string) error {
	if len(channels) == 0 {
		return nil
	}
	select {
	case <-s.done:
		return nil // nothing is subscribed any more
	default:
	}
	if err := s.pc.Unsubscribe(ctx, channels...); err != nil {
		return fmt.Errorf("driver: unsubscribe: %w", err)
	}
	return nil
}

func (s *subscription) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	err := s.pc.Close()
	<-s.done
	return err
}

func (s *subscription) loop() {
	defer close(s.done)
	defer close(s.msgs)
	ctx := context.Background()
	for {
		ev, err := s.pc.Receive(ctx)
		var re driver.ReplyError
		if err != nil && errors.As(err, &re) {
			s.refused(err)
			continue
		}
		if err != nil {
			s.mu.Lock()
			lost := !s.closed
			if lost {
				s.err = fmt.Errorf("driver: subscription lost: %w", err)
				s.closed = true
			}
			s.mu.Unlock()
			if lost {
				_ = s.pc.Close()
			}
			return
		}
		switch ev.Kind {
		case EventMessage:
			select {
			case s.msgs <- driver.Message{Channel: ev.Channel, Payload: ev.Payload}:
			default: // the reader is far behind: drop the hint
			}
		case EventSubscribe:
			s.mu.Lock()
			for _, w := range s.pending[ev.Channel] {
				close(w.done)
			}
			delete(s.pending, ev.Channel)
			s.mu.Unlock()
		case EventUnsubscribe:
			if s.unsubscribed != nil {
				s.unsubscribed(s, ev.Channel)
			}
		}
	}
}

// refused fails every Subscribe call waiting for a confirmation with err,
// an error reply: the connection sends one (S)SUBSCRIBE at a time per
// caller, and a reply cannot say which channel it answers.
func (s *subscription) refused(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for ch, ws := range s.pending {
		for _, w := range ws {
			w.err = err
			close(w.done)
		}
		delete(s.pending, ch)
	}
}
