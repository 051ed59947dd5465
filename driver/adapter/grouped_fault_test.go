package adapter_test

import (
	"context"
	"errors"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/driver/adapter"
	"github.com/lockbridge/lockbridge/driver/keyslot"
	"github.com/lockbridge/lockbridge/internal/protocol/resp"
	"github.com/lockbridge/lockbridge/internal/testing/redistest"
)

// A slot moves twice in a row: A to B, then B to C before the grouped
// subscription, following the first move, has put its new connection (to
// B) in place — the goroutine doing it was held up right after its
// SSUBSCRIBE went out, as a loaded process holds a goroutine up. B drops
// the channel meanwhile (its SUNSUBSCRIBE arrives before the connection is
// the group's), and the subscription must follow the slot once more, to C,
// rather than keep a connection subscribed to nothing: before the fix that
// drop was ignored, the channel stayed subscribed nowhere, and every later
// release notice was lost for as long as the subscription lived.
func TestFaultGroupedMovedTwiceBeforeInstall(t *testing.T) {
	cl := redistest.StartCluster(t)
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cl.Addrs(), MaxRetries: -1, MaxRedirects: -1})
	t.Cleanup(func() { _ = rdb.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ch := "{grouped-twice}:released"
	slot := keyslot.Of(ch)

	var hold atomic.Pointer[string] // the node whose next SSUBSCRIBE is held up
	sent, resume := make(chan struct{}), make(chan struct{})
	open := func(ctx context.Context, ch, addr string) (adapter.PubSubConn, error) {
		m, err := master(ctx, rdb, ch, addr)
		if err != nil {
			return nil, err
		}
		return &pubsub{ps: m.SSubscribe(ctx), addr: m.Options().Addr, sent: func(a string) {
			if h := hold.Load(); h != nil && *h == a && hold.CompareAndSwap(h, nil) {
				close(sent)
				<-resume
			}
		}}, nil
	}
	sub := adapter.NewGroupedSubscription(func(ch string) string { return strconv.Itoa(keyslot.Of(ch)) }, open)
	defer sub.Close()
	require.NoError(t, sub.Subscribe(ctx, ch))

	m := cl.BeginSlotMove(t, slot)
	b := m.To()
	addr := b.Addr()
	hold.Store(&addr)
	m.Finish(t) // A drops the channel: the subscription follows the slot to B
	select {
	case <-sent:
	case <-time.After(10 * time.Second):
		t.Fatal("the subscription did not subscribe on the slot's new owner")
	}
	waitShardSubscribers(t, b, ch, 1)
	c := cl.MoveEmptySlot(t, slot) // B drops it too, before the connection to it is installed
	waitShardSubscribers(t, b, ch, 0)
	time.Sleep(50 * time.Millisecond) // B's SUNSUBSCRIBE reaches the connection's receive loop
	close(resume)

	assert.Eventually(t, func() bool { return shardSubscribers(t, c, ch) == 1 }, 5*time.Second, 5*time.Millisecond,
		"the subscription follows the slot to its owner, %s", c.Addr())
	conn, err := resp.Dial(c.Addr(), 2*time.Second)
	require.NoError(t, err)
	defer conn.Close()
	_, err = conn.Do("SPUBLISH", ch, "released")
	require.NoError(t, err)
	deadline := time.After(5 * time.Second)
	for {
		select {
		case msg, ok := <-sub.Messages():
			require.True(t, ok, "subscription ended: %v", sub.Err())
			if msg.Moved {
				continue // the moves' wake-ups
			}
			assert.Equal(t, driver.Message{Channel: ch, Payload: "released"}, msg)
			return
		case <-deadline:
			t.Fatalf("a notice published on %s, the slot's owner, never arrived", c.Addr())
		}
	}
}

// master is the cluster's master client at addr or, when addr is "", the
// one serving ch by the client's slot map.
func master(ctx context.Context, rdb *redis.ClusterClient, ch, addr string) (*redis.Client, error) {
	if addr == "" {
		return rdb.MasterForKey(ctx, ch)
	}
	var found *redis.Client
	_ = rdb.ForEachMaster(ctx, func(_ context.Context, m *redis.Client) error {
		if m.Options().Addr == addr {
			found = m
		}
		return nil
	})
	if found == nil {
		return nil, adapter.ErrNoRoute
	}
	return found, nil
}

// pubsub is a go-redis sharded PubSub as an adapter.PubSubConn; sent is
// called on the caller's goroutine once an SSUBSCRIBE is on the wire.
type pubsub struct {
	ps   *redis.PubSub
	addr string
	sent func(addr string)
}

func (p *pubsub) Subscribe(ctx context.Context, channels ...string) error {
	err := p.ps.SSubscribe(ctx, channels...)
	p.sent(p.addr)
	return err
}

func (p *pubsub) Unsubscribe(ctx context.Context, channels ...string) error {
	return p.ps.SUnsubscribe(ctx, channels...)
}

func (p *pubsub) Close() error { return p.ps.Close() }

func (p *pubsub) Receive(ctx context.Context) (adapter.Event, error) {
	msg, err := p.ps.Receive(ctx)
	if err != nil {
		var re redis.Error
		if errors.As(err, &re) {
			return adapter.Event{}, driver.ReplyError(re.Error())
		}
		return adapter.Event{}, err
	}
	switch m := msg.(type) {
	case *redis.Message:
		return adapter.Event{Kind: adapter.EventMessage, Channel: m.Channel, Payload: m.Payload}, nil
	case *redis.Subscription:
		switch m.Kind {
		case "ssubscribe":
			return adapter.Event{Kind: adapter.EventSubscribe, Channel: m.Channel}, nil
		case "sunsubscribe":
			return adapter.Event{Kind: adapter.EventUnsubscribe, Channel: m.Channel}, nil
		}
	}
	return adapter.Event{Kind: adapter.EventOther}, nil
}

// shardSubscribers is PUBSUB SHARDNUMSUB ch on node.
func shardSubscribers(t *testing.T, node *redistest.Server, ch string) int64 {
	conn, err := resp.Dial(node.Addr(), 2*time.Second)
	require.NoError(t, err)
	defer conn.Close()
	r, err := conn.Do("PUBSUB", "SHARDNUMSUB", ch)
	require.NoError(t, err)
	rr, _ := r.([]any)
	require.Len(t, rr, 2, "%#v", r)
	n, _ := rr[1].(int64)
	return n
}

func waitShardSubscribers(t *testing.T, node *redistest.Server, ch string, want int64) {
	t.Helper()
	require.Eventually(t, func() bool { return shardSubscribers(t, node, ch) == want }, 5*time.Second, 5*time.Millisecond,
		"%s has %d subscribers of %s, want %d", node.Addr(), shardSubscribers(t, node, ch), ch, want)
}
