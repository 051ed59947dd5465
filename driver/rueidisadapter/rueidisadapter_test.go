package rueidisadapter_test

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/adaptertest"
	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/driver/rueidisadapter"
	"github.com/lockbridge/lockbridge/internal/testing/faultproxy"
	"github.com/lockbridge/lockbridge/internal/testing/redistest"
)

func client(t *testing.T, opt rueidis.ClientOption) rueidis.Client {
	t.Helper()
	c, err := rueidis.NewClient(opt)
	require.NoError(t, err)
	t.Cleanup(c.Close)
	return c
}

// New talks to the one server at addr (ForceSingleClient: given the address
// of a cluster node, rueidis would otherwise build a cluster client); the
// suite's own single-server tests pass the same with the detection.
func TestConformance(t *testing.T) {
	adaptertest.Run(t, adaptertest.Factory{
		New: func(t *testing.T, addr string) driver.Client {
			return rueidisadapter.New(client(t, rueidis.ClientOption{InitAddress: []string{addr}, ForceSingleClient: true}))
		},
		NewCluster: func(t *testing.T, addrs []string) driver.Client {
			return rueidisadapter.New(client(t, rueidis.ClientOption{InitAddress: addrs}))
		},
	})
}

// A Sentinel-managed primary: rueidis asks a sentinel (one per server the
// suite starts, monitoring it) for the primary's address.
func TestConformanceSentinel(t *testing.T) {
	adaptertest.Run(t, adaptertest.Factory{
		New: func(t *testing.T, addr string) driver.Client {
			s := redistest.StartSentinel(t, addr, "mymaster")
			c := client(t, rueidis.ClientOption{InitAddress: []string{s.Addr()},
				Sentinel: rueidis.SentinelOption{MasterSet: "mymaster"}})
			require.Equal(t, rueidis.ClientModeSentinel, c.Mode())
			return rueidisadapter.New(c)
		},
	})
}

// Without auto-pipelining every command takes a pooled connection of its
// own; the adapter's guarantees are the same.
func TestConformanceNoAutoPipelining(t *testing.T) {
	adaptertest.Run(t, adaptertest.Factory{
		New: func(t *testing.T, addr string) driver.Client {
			return rueidisadapter.New(client(t, rueidis.ClientOption{InitAddress: []string{addr}, DisableAutoPipelining: true}))
		},
	})
}

// A client built with ConnLifetime resends a command whose connection
// expired under it: every call is refused, naming the setting, and nothing
// is sent.
func TestRefusesConnLifetime(t *testing.T) {
	srv := redistest.Start(t)
	cl := redistest.StartCluster(t)
	sentinel := redistest.StartSentinel(t, srv.Addr(), "mymaster")
	// Every client type rueidis.NewClient returns, each accepted as built
	// and refused with ConnLifetime.
	for name, opt := range map[string]rueidis.ClientOption{
		"single":   {InitAddress: []string{srv.Addr()}},
		"forced":   {InitAddress: []string{srv.Addr()}, ForceSingleClient: true},
		"cluster":  {InitAddress: cl.Addrs()},
		"sentinel": {InitAddress: []string{sentinel.Addr()}, Sentinel: rueidis.SentinelOption{MasterSet: "mymaster"}},
		"replicas": {
			InitAddress:    []string{srv.Addr()},
			Standalone:     rueidis.StandaloneOption{ReplicaAddress: []string{srv.Addr()}},
			SendToReplicas: func(rueidis.Completed) bool { return false },
		},
	} {
		t.Run(name, func(t *testing.T) {
			require.NoError(t, rueidisadapter.Check(client(t, opt)))
			opt.ConnLifetime = time.Minute
			err := rueidisadapter.Check(client(t, opt))
			require.ErrorIs(t, err, lockbridge.ErrInvalid)
			assert.Contains(t, err.Error(), "ConnLifetime")

			c := rueidisadapter.New(client(t, opt))
			_, err = c.SetNX(context.Background(), "refused", "1")
			require.ErrorIs(t, err, lockbridge.ErrInvalid)
			assert.NotErrorIs(t, err, lockbridge.ErrUnknownOutcome, "nothing was sent")
			_, err = c.Subscribe(context.Background(), "ch")
			require.ErrorIs(t, err, lockbridge.ErrInvalid)
			assert.False(t, c.Cluster())
		})
	}
	probe := rueidisadapter.New(client(t, rueidis.ClientOption{InitAddress: []string{srv.Addr()}}))
	_, ok, err := probe.Get(context.Background(), "refused")
	require.NoError(t, err)
	assert.False(t, ok, "no refused SETNX reached the server")
}

// Why New refuses ConnLifetime: rueidis itself sends a SETNX twice. Its
// reply is lost (the server falls silent), the connection's lifetime ends,
// rueidis closes it a second later, fails the SETNX with its internal
// "connection is expired" error and sends it again on a new connection —
// where it runs a second time.
func TestFaultConnLifetimeResends(t *testing.T) {
	srv := redistest.Start(t)
	p := faultproxy.Start(t, srv.Addr())
	c := client(t, rueidis.ClientOption{InitAddress: []string{p.Addr()}, ForceSingleClient: true,
		AlwaysPipelining: true, ConnLifetime: 300 * time.Millisecond})
	sent := p.Count(faultproxy.Command("SETNX"))
	p.DropReply(faultproxy.Command("SETNX"), 1, faultproxy.Hang)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	n, err := c.Do(ctx, c.B().Arbitrary("SETNX").Keys("k").Args("1").Build()).AsInt64()
	require.NoError(t, err)
	assert.Equal(t, int64(0), n, "the second SETNX found the first one's key")
	assert.Equal(t, 2, sent(), "rueidis sent the SETNX twice")
	require.ErrorIs(t, rueidisadapter.Check(c), lockbridge.ErrInvalid, "and the adapter refuses the client")
}

// Why the adapter builds every command with Arbitrary(…).Build(): rueidis
// retries a command marked ReadOnly after its connection broke, and marked
// so a SETNX whose reply was lost runs twice. Built as the adapter builds
// it, it is sent once (the conformance suite's NoResend checks the
// adapter itself).
func TestFaultReadOnlyCommandsResend(t *testing.T) {
	srv := redistest.Start(t)
	p := faultproxy.Start(t, srv.Addr())
	c := client(t, rueidis.ClientOption{InitAddress: []string{p.Addr()}, ForceSingleClient: true})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, tc := range []struct {
		readOnly bool
		sends    int
	}{{true, 2}, {false, 1}} {
		key := fmt.Sprintf("k:%v", tc.readOnly)
		sent := p.Count(faultproxy.Command("SETNX"))
		p.DropReply(faultproxy.Command("SETNX"), 1, faultproxy.Close)
		cmd := c.B().Arbitrary("SETNX").Keys(key).Args("1")
		if tc.readOnly {
			_ = c.Do(ctx, cmd.ReadOnly())
		} else {
			_ = c.Do(ctx, cmd.Build())
		}
		assert.Equal(t, tc.sends, sent(), "ReadOnly %v", tc.readOnly)
	}
}

// A client of a type the adapter cannot inspect (a wrapper) is refused.
func TestRefusesUnknownClient(t *testing.T) {
	srv := redistest.Start(t)
	inner := client(t, rueidis.ClientOption{InitAddress: []string{srv.Addr()}})
	for _, c := range []rueidis.Client{wrapper{inner}, nil} {
		err := rueidisadapter.Check(c)
		require.ErrorIs(t, err, lockbridge.ErrInvalid)
		_, _, err = rueidisadapter.New(c).Get(context.Background(), "k")
		require.ErrorIs(t, err, lockbridge.ErrInvalid)
	}
	require.NoError(t, rueidisadapter.Check(inner))
}

type wrapper struct{ rueidis.Client }

// With AlwaysPipelining every command goes through the connection's
// pipeline, never written and read on the caller's goroutine. A write whose
// reply never comes is reported as an unknown outcome when its context ends
// and is never sent again; the connection stays open, holding the commands
// pipelined behind it, until rueidis's PING finds it silent (after
// Dialer.KeepAlive without replies, waiting ConnWriteTimeout), and the
// client then works on a new one.
func TestFaultPipelinedLostReplyNotResent(t *testing.T) {
	srv := redistest.Start(t)
	p := faultproxy.Start(t, srv.Addr())
	c := rueidisadapter.New(client(t, rueidis.ClientOption{InitAddress: []string{p.Addr()}, AlwaysPipelining: true,
		ConnWriteTimeout: 300 * time.Millisecond, Dialer: net.Dialer{KeepAlive: 300 * time.Millisecond}}))
	ctx := context.Background()
	for _, then := range []faultproxy.After{faultproxy.Hang, faultproxy.Close} {
		key := fmt.Sprintf("lost:%d", then)
		sent := p.Count(faultproxy.Command("SETNX"))
		p.DropReply(faultproxy.Command("SETNX"), 1, then)
		cctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		_, err := c.SetNX(cctx, key, "1")
		cancel()
		require.ErrorIs(t, err, lockbridge.ErrUnknownOutcome)

		var v string
		require.Eventually(t, func() bool {
			var err error
			v, _, err = c.Get(ctx, key)
			return err == nil
		}, 5*time.Second, 50*time.Millisecond, "the client recovers on a new connection")
		assert.Equal(t, "1", v, "the SETNX ran")
		assert.Equal(t, 1, sent(), "sent once, never again")
	}
}
