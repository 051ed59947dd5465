package valkeyadapter_test

import (
	"context"
	"crypto/tls"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/valkey-io/valkey-go"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/adaptertest"
	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/driver/valkeyadapter"
	"github.com/lockbridge/lockbridge/internal/testing/redistest"
)

func client(t *testing.T, opt valkey.ClientOption) valkey.Client {
	t.Helper()
	c, err := valkey.NewClient(opt)
	require.NoError(t, err)
	t.Cleanup(c.Close)
	return c
}

// The suite runs on redis-server, which speaks the protocol valkey-server
// does. New talks to the one server at addr (ForceSingleClient: given the
// address of a cluster node, valkey-go would otherwise build a cluster
// client).
func TestConformance(t *testing.T) {
	adaptertest.Run(t, adaptertest.Factory{
		New: func(t *testing.T, addr string) driver.Client {
			return valkeyadapter.New(client(t, valkey.ClientOption{InitAddress: []string{addr}, ForceSingleClient: true}))
		},
		NewCluster: func(t *testing.T, addrs []string) driver.Client {
			return valkeyadapter.New(client(t, valkey.ClientOption{InitAddress: addrs}))
		},
	})
}

// A Sentinel-managed primary: valkey-go asks a sentinel (one per server the
// suite starts, monitoring it) for the primary's address.
func TestConformanceSentinel(t *testing.T) {
	adaptertest.Run(t, adaptertest.Factory{
		New: func(t *testing.T, addr string) driver.Client {
			s := redistest.StartSentinel(t, addr, "mymaster")
			c := client(t, valkey.ClientOption{InitAddress: []string{s.Addr()},
				Sentinel: valkey.SentinelOption{MasterSet: "mymaster"}})
			require.Equal(t, valkey.ClientModeSentinel, c.Mode())
			return valkeyadapter.New(c)
		},
	})
}

// A client built with ConnLifetime resends a command whose connection
// expired under it, and a client of a type the adapter cannot inspect may:
// every call is refused before anything is sent.
func TestRefusals(t *testing.T) {
	srv := redistest.Start(t)
	plain := client(t, valkey.ClientOption{InitAddress: []string{srv.Addr()}})
	require.NoError(t, valkeyadapter.Check(plain))
	cl := redistest.StartCluster(t)
	sentinel := redistest.StartSentinel(t, srv.Addr(), "mymaster")
	for name, c := range map[string]valkey.Client{
		"ConnLifetime":         client(t, valkey.ClientOption{InitAddress: []string{srv.Addr()}, ConnLifetime: time.Minute}),
		"ConnLifetime cluster": client(t, valkey.ClientOption{InitAddress: cl.Addrs(), ConnLifetime: time.Minute}),
		"ConnLifetime sentinel": client(t, valkey.ClientOption{InitAddress: []string{sentinel.Addr()},
			Sentinel: valkey.SentinelOption{MasterSet: "mymaster"}, ConnLifetime: time.Minute}),
		"wrapper": wrapper{plain},
		"nil":     nil,
	} {
		t.Run(name, func(t *testing.T) {
			err := valkeyadapter.Check(c)
			require.ErrorIs(t, err, lockbridge.ErrInvalid)
			assert.Contains(t, err.Error(), "valkeyadapter")
			_, err = valkeyadapter.New(c).SetNX(context.Background(), "refused", "1")
			require.ErrorIs(t, err, lockbridge.ErrInvalid)
			assert.NotErrorIs(t, err, lockbridge.ErrUnknownOutcome, "nothing was sent")
		})
	}
	_, ok, err := valkeyadapter.New(plain).Get(context.Background(), "refused")
	require.NoError(t, err)
	assert.False(t, ok, "no refused SETNX reached the server")
}

type wrapper struct{ valkey.Client }

// Slots moving with their keys while locks are in use: valkey-go follows
// MOVED and ASK, the adapter TRYAGAIN, a waiting Lock keeps waiting, and
// release notices follow the slot (adaptertest.Reshard).
func TestFaultReshard(t *testing.T) {
	adaptertest.Reshard(t, adaptertest.ClusterFactory{
		New: func(t *testing.T, addrs []string) driver.Client {
			return valkeyadapter.New(client(t, valkey.ClientOption{InitAddress: addrs}))
		},
		NewVia: func(t *testing.T, addrs []string, via func(string) string) driver.Client {
			return valkeyadapter.New(client(t, valkey.ClientOption{InitAddress: addrs,
				DialCtxFn: func(ctx context.Context, addr string, d *net.Dialer, _ *tls.Config) (net.Conn, error) {
					return d.DialContext(ctx, "tcp", via(addr))
				}}))
		},
	})
}
