package rueidisadapter

import (
	"context"

	"github.com/redis/rueidis"

	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/driver/internal/rueidiscore"
)

// New returns the driver.Client for c, a client rueidis.NewClient returned:
// single server, Redis Cluster, Sentinel or standalone with replicas.
//
// lockbridge never lets a lower layer send a command that changes lock
// state twice. The adapter builds every command as one rueidis never
// retries (an Arbitrary command, not marked ReadOnly), whatever
// DisableRetry says; the one setting under which rueidis still resends it
// is ConnLifetime. A client built with it, or of a type the adapter does
// not know (a wrapper or a mock), is refused: every call of the returned
// Client fails with an error wrapping lockbridge.ErrInvalid that names the
// reason. Check reports the same at start-up.
func New(c rueidis.Client) driver.Client {
	if err := Check(c); err != nil {
		return rueidiscore.Wrap(nil, err)
	}
	return rueidiscore.Wrap(backend{c}, nil)
}

// Check returns an error wrapping lockbridge.ErrInvalid when c would send
// a command again after it may have reached the server (a ConnLifetime
// set), or is of a type the adapter cannot inspect; nil when New's Client
// can use it.
func Check(c rueidis.Client) error {
	return rueidiscore.Check(c, "rueidis")
}

// backend is a rueidis.Client as a rueidiscore.Backend.
type backend struct{ c rueidis.Client }

func (b backend) Cluster() bool { return b.c.Mode() == rueidis.ClientModeCluster }

func (b backend) Do(ctx context.Context, cmd rueidiscore.Command) (any, error) {
	return result(b.c.Do(ctx, build(b.c.B(), cmd)))
}

func (b backend) Dedicate() (rueidiscore.Dedicated, func()) {
	d, release := b.c.Dedicate()
	return dedicated{d}, release
}

func (b backend) DedicateAt(addr string) (rueidiscore.Dedicated, func(), bool) {
	n, ok := b.c.Nodes()[addr]
	if !ok {
		return nil, nil, false
	}
	d, release := n.Dedicate()
	return dedicated{d}, release, true
}

// build makes cmd an Arbitrary command routed by its key. Built with Build,
// not ReadOnly, it lacks rueidis's retryable flag, so no client retries it
// after a network error (cmd.IsRetryable() in every retry condition).
func build(b rueidis.Builder, cmd rueidiscore.Command) rueidis.Completed {
	if cmd.Key == 0 {
		return b.Arbitrary(cmd.Parts...).Build()
	}
	return b.Arbitrary(cmd.Parts[:cmd.Key]...).Keys(cmd.Parts[cmd.Key]).Args(cmd.Parts[cmd.Key+1:]...).Build()
}

func result(r rueidis.RedisResult) (any, error) {
	if err := r.NonRedisError(); err != nil {
		return nil, err
	}
	m, _ := r.ToMessage() // an error reply is in m
	// The common replies are read in place: m handed to the generic
	// Normalise would move to the heap.
	switch {
	case m.IsInt64():
		return m.AsInt64()
	case m.IsString():
		return rueidiscore.String(m.ToString())
	case m.IsArray():
		elems, err := m.ToArray()
		if err != nil {
			return nil, err
		}
		return rueidiscore.NormaliseArray[rueidis.RedisMessage](elems)
	}
	other := m
	return rueidiscore.Normalise(&other)
}

// dedicated is a rueidis.DedicatedClient as a rueidiscore.Dedicated.
type dedicated struct{ d rueidis.DedicatedClient }

func (d dedicated) Do(ctx context.Context, cmd rueidiscore.Command) (any, error) {
	return result(d.d.Do(ctx, build(d.d.B(), cmd)))
}

func (d dedicated) Hooks(onMessage func(channel, payload string),
	onSubscription func(kind, channel string)) <-chan error {
	return d.d.SetPubSubHooks(rueidis.PubSubHooks{
		OnMessage:      func(m rueidis.PubSubMessage) { onMessage(m.Channel, m.Message) },
		OnSubscription: func(s rueidis.PubSubSubscription) { onSubscription(s.Kind, s.Channel) },
	})
}

func (d dedicated) Subscribe(ctx context.Context, sharded bool, channels []string) error {
	b := d.d.B()
	if sharded {
		return replyError(d.d.Do(ctx, b.Ssubscribe().Channel(channels...).Build()))
	}
	return replyError(d.d.Do(ctx, b.Subscribe().Channel(channels...).Build()))
}

// replyError is r's error, an error reply as a driver.ReplyError.
func replyError(r rueidis.RedisResult) error {
	if err := r.NonRedisError(); err != nil {
		return err
	}
	if err := r.Error(); err != nil {
		return driver.ReplyError(err.Error())
	}
	return nil
}

func (d dedicated) Unsubscribe(ctx context.Context, sharded bool, channels []string) error {
	b := d.d.B()
	if sharded {
		return d.d.Do(ctx, b.Sunsubscribe().Channel(channels...).Build()).Error()
	}
	return d.d.Do(ctx, b.Unsubscribe().Channel(channels...).Build()).Error()
}

func (d dedicated) Close() { d.d.Close() }
