package control

import (
	"context"
	"testing"
	"time"

	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/internal/protocol/migrateproto"
	"github.com/stretchr/testify/require"
)

// heartbeat writes e as a client would (renews not 0: a touch, which
// renews only the expiry of the stored entry of seq renews).
func (s store) heartbeat(ctx context.Context, e migrateproto.Entry, hold time.Duration,
	renews int64) (migrateproto.HeartbeatReply, error) {
	return migrateproto.Heartbeat(ctx, s.c, migrateproto.HeartbeatArgs{NS: s.k, Entry: e, Hold: hold, Touch: renews != 0,
		Renews: renews})
}

// leave removes a client's entry as a closing Locker does.
func (s store) leave(ctx context.Context, id string) error {
	_, err := migrateproto.Forget(ctx, s.c, migrateproto.ForgetArgs{NS: s.k, ID: id, Force: true})
	return err
}

// recordSighting records a legacy sighting as a dual-phase Locker does.
func (s store) recordSighting(ctx context.Context, legacyKey string) error {
	return migrateproto.RecordSighting(ctx, s.c, migrateproto.SightingArgs{NS: s.k, LegacyKey: legacyKey})
}

// listeners counts the subscribers of the namespace's phase notices: the
// channel of protocol 2 and the sharded ones of protocol 3.
func listeners(t *testing.T, c driver.Client, k migrateproto.Keys) int64 {
	t.Helper()
	args := []any{"PUBSUB", "NUMSUB", k.Channel}
	for i := 0; i < migrateproto.NoticeShards; i++ {
		args = append(args, k.Shard(i))
	}
	r, err := c.Do(context.Background(), args...)
	require.NoError(t, err)
	var n int64
	a, _ := r.([]any)
	for i := 1; i < len(a); i += 2 {
		v, _ := a[i].(int64)
		n += v
	}
	return n
}
