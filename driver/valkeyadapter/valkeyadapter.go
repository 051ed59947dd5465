package valkeyadapter

import (
	"context"

	"github.com/valkey-io/valkey-go"

	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/internal/rueidiscore"
)

// New returns the driver.Client for c, a client valkey.NewClient returned:
// single server, Redis Cluster, Sentinel or standalone with replicas.
//
// lockbridge never lets a lower layer send a command that changes lock
// state twice. The adapter builds every command as one valkey-go never
// retries (an Arbitrary command, not marked ReadOnly), whatever
// DisableRetry says; the one setting under which valkey-go still resends it
// is ConnLifetime. A client built with it, or of a type the adapter does
// not know (a wrapper or a mock), is refused: every call of the returned
// Client fails with an error wrapping lockbridge.ErrInvalid that names the
// reason. Check reports the same at start-up.
func New(c valkey.Client) driver.Client {
	if err := Check(c); err != nil {
		return rueidiscore.Wrap(nil, err)
	}
	return rueidiscore.Wrap(backend{c}, nil)
}

// Check returns an error wrapping lockbridge.ErrInvalid when c would send
// a command again after it may have reached the server (a ConnLifetime
// set), or is of a type the adapter cannot inspect; nil when New's Client
// can use it.
func Check(c valkey.Client) error {
	return rueidiscore.Check(c, "valkey")
}

// backend is a valkey.Client as a rueidiscore.Backend.
type backend struct{ c valkey.Client }

func (b backend) Cluster() bool { return b.c.Mode() == valkey.ClientModeCluster }

func (b backend) Do(ctx context.Context, cmd rueidiscore.Command) (any, error) {
	return result(b.c.Do(ctx, build(b.c.B(), cmd)))
}

func (b backend) Dedicate() (rueidiscore.Dedicated, func()) {
	d, release := b.c.Dedicate()
	return dedicated{d}, release
}

// build makes cmd an Arbitrary command routed by its key. Built with Build,
// not ReadOnly, it lacks valkey-go's retryable flag, so no client retries it
// after a network error (cmd.IsRetryable() in every retry condition).
func build(b valkey.Builder, cmd rueidiscore.Command) valkey.Completed {
	if cmd.Key == 0 {
		return b.Arbitrary(cmd.Parts...).Build()
	}
	return b.Arbitrary(cmd.Parts[:cmd.Key]...).Keys(cmd.Parts[cmd.Key]).Args(cmd.Parts[cmd.Key+1:]...).Build()
}

func result(r valkey.ValkeyResult) (any, error) {
	if err := r.NonValkeyError(); err != nil {
		return nil, err
	}
	m, _ := r.ToMessage() // an error reply is in m
	return rueidiscore.Normalise(&m)
}

// dedicated is a valkey.DedicatedClient as a rueidiscore.Dedicated.
type dedicated struct{ d valkey.DedicatedClient }

func (d dedicated) Do(ctx context.Context, cmd rueidiscore.Command) (any, error) {
	return result(d.d.Do(ctx, build(d.d.B(), cmd)))
}

func (d dedicated) Hooks(onMessage func(channel, payload string), onSubscription func(kind, channel string)) <-chan error {
	return d.d.SetPubSubHooks(valkey.PubSubHooks{
		OnMessage:      func(m valkey.PubSubMessage) { onMessage(m.Channel, m.Message) },
		OnSubscription: func(s valkey.PubSubSubscription) { onSubscription(s.Kind, s.Channel) },
	})
}

func (d dedicated) Subscribe(ctx context.Context, sharded bool, channels []string) error {
	b := d.d.B()
	if sharded {
		return d.d.Do(ctx, b.Ssubscribe().Channel(channels...).Build()).Error()
	}
	return d.d.Do(ctx, b.Subscribe().Channel(channels...).Build()).Error()
}

func (d dedicated) Unsubscribe(ctx context.Context, sharded bool, channels []string) error {
	b := d.d.B()
	if sharded {
		return d.d.Do(ctx, b.Sunsubscribe().Channel(channels...).Build()).Error()
	}
	return d.d.Do(ctx, b.Unsubscribe().Channel(channels...).Build()).Error()
}

func (d dedicated) Close() { d.d.Close() }
