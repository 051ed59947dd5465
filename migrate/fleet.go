package migrate

import (
	"context"
	"time"

	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/internal/protocol/migrateproto"
)

// store reads and writes a namespace's phase, registry and sightings.
type store struct {
	c driver.Client
	k migrateproto.Keys
}

type syncReply = migrateproto.HeartbeatReply

// heartbeat writes the client's entry — or, when renews is not 0, touches:
// renews the expiry only of the stored entry whose seq is renews — with an
// expiry hold after the server's now, and reads the phase.
func (s store) heartbeat(ctx context.Context, e migrateproto.Entry, hold time.Duration, renews int64) (syncReply,
	error) {
	return migrateproto.Heartbeat(ctx, s.c, migrateproto.HeartbeatArgs{NS: s.k, Entry: e, Hold: hold, Touch: renews != 0,
		Renews: renews})
}

// leave removes the client's entry.
func (s store) leave(ctx context.Context, id string) error {
	_, err := migrateproto.Forget(ctx, s.c, migrateproto.ForgetArgs{NS: s.k, ID: id, Force: true})
	return err
}

func (s store) recordSighting(ctx context.Context, legacyKey string) error {
	return migrateproto.RecordSighting(ctx, s.c, migrateproto.SightingArgs{NS: s.k, LegacyKey: legacyKey})
}
