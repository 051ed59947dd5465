package migrateproto

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/lockbridge/lockbridge/driver"
)

// HeartbeatArgs are heartbeat.lua's arguments: the client's entry (ARGV[1]
// its id, ARGV[2] its sequence number, ARGV[4] the entry), and how long
// after the server's now its expiry is (ARGV[3]; at least 1 ms). With Touch
// the stored entry's expiry is renewed and the entry not sent (ARGV[4] ""),
// if the stored entry is the one whose seq Renews names (ARGV[5]: the seq
// of the client's last confirmed write; "" without Touch).
type HeartbeatArgs struct {
	NS     Keys // KEYS[1] to KEYS[5]: the phase key, the namespace hash, the registry
	Entry  Entry
	Hold   time.Duration
	Touch  bool
	Renews int64
}

// Keys returns KEYS.
func (a HeartbeatArgs) Keys() []string {
	k := a.NS
	return []string{k.Phase, k.Meta, k.Clients, k.Expiry, k.Seen}
}

// argv returns ARGV, with raw the entry's JSON ("" for a touch).
func (a HeartbeatArgs) argv(raw string) []any {
	renews := ""
	if a.Touch {
		renews = strconv.FormatInt(a.Renews, 10)
	}
	return []any{a.Entry.ID, strconv.FormatInt(a.Entry.Seq, 10), Millis(max(a.Hold, time.Millisecond)), raw, renews}
}

// What became of a heartbeat's entry (heartbeat.lua's WRITTEN, STALE and
// NO_ENTRY).
const (
	HeartbeatWritten = 1  // the entry (or the touch) landed
	HeartbeatStale   = 0  // a newer entry stood: nothing written
	HeartbeatNoEntry = -1 // a touch found no entry (forgotten, pruned), or not the one it names
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
func Heartbeat(ctx context.Context, c driver.Client, a HeartbeatArgs) (HeartbeatReply, error) {
	raw := ""
	if !a.Touch {
		b, err := json.Marshal(a.Entry)
		if err != nil {
			return HeartbeatReply{}, fmt.Errorf("migrate: heartbeat: %w", err)
		}
		raw = string(b)
	}
	r, err := c.Eval(ctx, HeartbeatScript, a.Keys(), a.argv(raw)...)
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
	NS     Keys          // KEYS[1] to KEYS[4]: the registries of every protocol
	ID     string        // ARGV[1]
	Force  bool          // ARGV[2]
	Margin time.Duration // ARGV[3]
}

// Keys returns KEYS.
func (a ForgetArgs) Keys() []string {
	return []string{a.NS.Clients, a.NS.Expiry, a.NS.Seen, a.NS.Fleet}
}

// Argv returns ARGV.
func (a ForgetArgs) Argv() []any { return []any{a.ID, Flag(a.Force), Millis(a.Margin)} }

// ForgetLive is forget.lua's reply (LIVE) for an entry it kept: live, and
// not forced.
const ForgetLive = -1

// ForgetNoExpiry is forget.lua's reply for an entry it kept because it has
// no expiry (its expiry was lost): nothing shows it dead, and the
// controller counts it live; not forced.
const ForgetNoExpiry = -2

// Forget runs forget.lua: it removes the client from both registries and
// returns how many entries went, or ForgetLive or ForgetNoExpiry.
func Forget(ctx context.Context, c driver.Client, a ForgetArgs) (int64, error) {
	r, err := c.Eval(ctx, ForgetScript, a.Keys(), a.Argv()...)
	if err != nil {
		return 0, fmt.Errorf("migrate: forget client %q: %w", a.ID, err)
	}
	n, _ := r.(int64)
	return n, nil
}

// SightingArgs are sighting.lua's arguments.
type SightingArgs struct {
	NS        Keys   // KEYS[1], KEYS[2]: the sighting hash, the namespace hash
	LegacyKey string // ARGV[1]: the legacy key met
}

// Keys returns KEYS.
func (a SightingArgs) Keys() []string { return []string{a.NS.Sighting, a.NS.Meta} }

// Argv returns ARGV.
func (a SightingArgs) Argv() []any { return []any{a.LegacyKey} }

// RecordSighting runs sighting.lua: a legacy-only holder met on a legacy
// key, stamped by the server's clock.
func RecordSighting(ctx context.Context, c driver.Client, a SightingArgs) error {
	if _, err := c.Eval(ctx, SightingScript, a.Keys(), a.Argv()...); err != nil {
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
