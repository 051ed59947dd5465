package migrate

import (
	"context"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/internal/protocol/migrateproto"
	"github.com/lockbridge/lockbridge/internal/runtime/notify"
)

// testNS sets a namespace's phase for the Locker's tests as the controller
// (package migrate/control, whose tests judge fleets) would, by the same
// script, without its judgement.
type testNS struct {
	c driver.Client
	k migrateproto.Keys
}

// initNS starts namespace ns at legacy at once (an init with no silence).
func initNS(t *testing.T, c driver.Client, ns string) testNS {
	t.Helper()
	k, err := migrateproto.NewKeys(ns)
	require.NoError(t, err)
	n := testNS{c: c, k: k}
	n.set(t, "", PhaseLegacy, "init")
	return n
}

func (n testNS) set(t *testing.T, seen string, to Phase, mode string) {
	t.Helper()
	ctx := context.Background()
	k := n.k
	r, err := n.c.Eval(ctx, migrateproto.PhaseSetScript,
		[]string{k.Phase, k.Channel, k.Since, k.Meta, k.Mark, k.Pending, k.Clients, k.Sighting, k.Fleet},
		seen, to.String(), notify.PublishCommand(n.c), "0", mode, "0", "0")
	require.NoError(t, err)
	require.Equal(t, int64(1), r, "phase_set.lua set %v", to)
	for i := 0; i < migrateproto.NoticeShards; i++ {
		_, err := n.c.Do(ctx, notify.PublishCommand(n.c), k.Shard(i), to.String())
		require.NoError(t, err)
	}
}

// walk steps the namespace to p, one phase at a time.
func walk(t *testing.T, n testNS, p Phase) {
	t.Helper()
	for {
		v, _, err := n.c.Get(context.Background(), n.k.Phase)
		require.NoError(t, err)
		cur, err := phaseName(v)
		require.NoError(t, err)
		if cur == p {
			return
		}
		to := cur + 1
		if p < cur {
			to = cur - 1
		}
		n.set(t, v, to, "step")
	}
}

// sighting returns the key and count of the namespace's legacy sighting.
func (n testNS) sighting(t *testing.T) (string, int64) {
	t.Helper()
	key, err := n.c.Do(context.Background(), "HGET", n.k.Sighting, "key")
	require.NoError(t, err)
	k, _ := key.(string)
	r, err := n.c.Do(context.Background(), "HGET", n.k.Sighting, "count")
	require.NoError(t, err)
	s, _ := r.(string)
	c, _ := strconv.ParseInt(s, 10, 64)
	return k, c
}

// members returns the registry's entries of protocol 3.
func (n testNS) members(t *testing.T) []migrateproto.Entry {
	t.Helper()
	r, err := n.c.Do(context.Background(), "HGETALL", n.k.Clients)
	require.NoError(t, err)
	flat, _ := r.([]any)
	var out []migrateproto.Entry
	for i := 0; i+1 < len(flat); i += 2 {
		id, _ := flat[i].(string)
		raw, _ := flat[i+1].(string)
		e, err := migrateproto.ParseEntry(id, raw)
		require.NoError(t, err)
		out = append(out, e)
	}
	return out
}

func heldPhase(lk lockbridge.Lock) Phase {
	return lk.(interface{ Phase() Phase }).Phase()
}
