package driver

import (
	"context"
)

// Message is one pub/sub message.
type Message struct {
	Channel, Payload string
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
