package driver

import (
	"context"
)

// Message is one pub/sub message.
type Message struct {
	Channel, Payload string
	// Moved marks a message nobody published: the subscription to Channel
	// has just moved to another connection (in Redis Cluster, to the node
	// its hash slot moved to), and a message published meanwhile may have
	// been missed. Act on it as on a message (a waiter attempts the lock
	// again); Payload is empty.
	Moved bool
}

// Subscription is a dedicated pub/sub connection. Its methods are safe for
// concurrent use.
type Subscription interface {
	// Messages delivers the messages received. It is closed when the
	// subscription ends: after Close, or when the connection is lost (Err
	// then says why). Messages are hints: when the reader falls more than
	// the buffer behind, further messages are dropped rather than blocking
	// the connection.
	Messages() <-chan Message
	// Subscribe adds channels and returns once the server confirmed them.
	Subscribe(ctx context.Context, channels ...string) error
	// Unsubscribe removes channels. It does not wait for the confirmation.
	Unsubscribe(ctx context.Context, channels ...string) error
	// Close ends the subscription and its connection.
	Close() error
	// Err reports why Messages was closed: nil while open and after Close.
	Err() error
}
