package migrateproto

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/lockbridge/lockbridge/driver"
)

// HeartbeatArgs are heartbeat.lua's arguments: the client's entry, and how
// long after the server's now its expiry is (at least 1 ms). With Touch the
// stored entry's expiry is renewed and the entry not sent.
type HeartbeatArgs struct {
	Entry Entry
	Hold  time.Duration
	Touch bool
}

// What became of a heartbeat's entry (heartbeat.lua's WRITTEN, STALE and
// NO_ENTRY).
const (
	HeartbeatWritten = 1  // the entry (or the touch) landed
	HeartbeatStale   = 0  // a newer entry stood: nothing written
	HeartbeatNoEntry = -1 // a touch found no entry (forgotten, pruned)
)

// HeartbeatReply is what a heartbeat read back: the phase key's value (""
// when absent), the namespace's instance and generation (0 when absent, -1
// when unreadable; HasNS when either is present), the server's time, and
// what became of the entry (a Heartbeat* code).
type HeartbeatReply struct {
	Phase         string
	Instance, Gen int64
	HasNS         bool
	ServerMS      int64
	Written       int64
}

// Heartbeat runs heartbeat.lua: it writes the client's entry, or touches
// it, and reads the phase.
func Heartbeat(ctx context.Context, c driver.Client, k Keys, a HeartbeatArgs) (HeartbeatReply, error) {
	raw := ""
	if !a.Touch {
		b, err := json.Marshal(a.Entry)
		if err != nil {
			return HeartbeatReply{}, fmt.Errorf("migrate: heartbeat: %w", err)
		}
		raw = string(b)
	}
	r, err := c.Eval(ctx, HeartbeatScript, []string{k.Phase, k.Meta, k.Clients, k.Expiry, k.Seen},
		a.Entry.ID, strconv.FormatInt(a.Entry.Seq, 10), Millis(max(a.Hold, time.Millisecond)), raw)
	if err != nil {
		return HeartbeatReply{}, fmt.Errorf("migrate: heartbeat: %w", err)
	}
	v, ok := r.([]any)
	if !ok || len(v) != 5 {
		return HeartbeatReply{}, fmt.Errorf("migrate: heartbeat: unexpected reply %#v", r)
	}
	var out HeartbeatReply
	out.Phase, _ = v[0].(string)
	init, _ := v[1].(string)
	gen, _ := v[2].(string)
	out.ServerMS, _ = v[3].(int64)
	out.Written, _ = v[4].(int64)
	if init != "" || gen != "" {
		out.HasNS = true
		out.Instance, out.Gen = Decimal(init), Decimal(gen)
	}
	return out, nil
}

// ForgetArgs are forget.lua's arguments: the client's id; with Force it
// goes even while live by the server's clock plus Margin.
type ForgetArgs struct {
	ID     string
	Force  bool
	Margin time.Duration
}

// ForgetLive is forget.lua's reply (LIVE) for an entry it kept: live, and
// not forced.
const ForgetLive = -1

// Forget runs forget.lua: it removes the client from both registries and
// returns how many entries went, or ForgetLive.
func Forget(ctx context.Context, c driver.Client, k Keys, a ForgetArgs) (int64, error) {
	r, err := c.Eval(ctx, ForgetScript, []string{k.Clients, k.Expiry, k.Seen, k.Fleet}, a.ID, Flag(a.Force), Millis(a.Margin))
	if err != nil {
		return 0, fmt.Errorf("migrate: forget client %q: %w", a.ID, err)
	}
	n, _ := r.(int64)
	return n, nil
}

// RecordSighting runs sighting.lua: a legacy-only holder met on legacyKey,
// stamped by the server's clock.
func RecordSighting(ctx context.Context, c driver.Client, k Keys, legacyKey string) error {
	if _, err := c.Eval(ctx, SightingScript, []string{k.Sighting, k.Meta}, legacyKey); err != nil {
		return fmt.Errorf("migrate: record legacy sighting: %w", err)
	}
	return nil
}

// Flag is a script's boolean argument: "1" or "0".
func Flag(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// Millis is a duration argument in whole milliseconds.
func Millis(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }
