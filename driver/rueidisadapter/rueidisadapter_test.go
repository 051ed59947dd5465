package rueidisadapter_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/driver/adapter/adaptertest"
	"github.com/lockbridge/lockbridge/driver/rueidisadapter"
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
	for _, opt := range []rueidis.ClientOption{
		{InitAddress: []string{srv.Addr()}, ConnLifetime: time.Minute},
		{InitAddress: []string{srv.Addr()}, ConnLifetime: time.Minute, ForceSingleClient: true},
	} {
		c := rueidisadapter.New(client(t, opt))
		err := rueidisadapter.Check(client(t, opt))
		require.ErrorIs(t, err, lockbridge.ErrInvalid)
		assert.Contains(t, err.Error(), "ConnLifetime")

		_, err = c.SetNX(context.Background(), "refused", "1")
		require.ErrorIs(t, err, lockbridge.ErrInvalid)
		assert.NotErrorIs(t, err, lockbridge.ErrUnknownOutcome, "nothing was sent")
		_, err = c.Subscribe(context.Background(), "ch")
		require.ErrorIs(t, err, lockbridge.ErrInvalid)
		assert.False(t, c.Cluster())
	}
	probe := rueidisadapter.New(client(t, rueidis.ClientOption{InitAddress: []string{srv.Addr()}}))
	_, ok, err := probe.Get(context.Background(), "refused")
	require.NoError(t, err)
	assert.False(t, ok, "the refused SETNX never reached the server")
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
