package migrateproto

import (
	"strconv"
	"time"
)

// The arguments of each script, one type per script: its fields are the
// KEYS and ARGV the script's header declares, and Keys and Argv return them
// in that order (TestScriptHeaders checks the two against each other). The
// reply codes each header names are the constants below, of the same names.

// AcquireArgs are acquire.lua's: one attempt at a lock in dual-write or
// dual-read.
type AcquireArgs struct {
	LegacyKey string // KEYS[1]: the legacy key, as the legacy profile encodes it
	ModernKey string // KEYS[2]: the modern key (same slot)
	FenceKey  string // KEYS[3]: the fence counter; the modern key again without fencing
	DualWrite bool   // ARGV[1]: write the legacy key too
	// Value is ARGV[2], our expiry W in the codec's bytes; Codec ARGV[3],
	// the codec id; Cutoff ARGV[4], the takeover cutoff in the profile's
	// unit (our clock's now minus the skew margin).
	Value, Codec string
	Cutoff       int64
	Token        string        // ARGV[5]: the modern token
	PX           time.Duration // ARGV[6]: the modern key's PX (whole ms)
	Fencing      bool          // ARGV[8]: INCR the fence counter (ARGV[7] is reserved: "0")
}

// Keys returns KEYS.
func (a AcquireArgs) Keys() []string { return []string{a.LegacyKey, a.ModernKey, a.FenceKey} }

// Argv returns ARGV.
func (a AcquireArgs) Argv() []any {
	return []any{Flag(a.DualWrite), a.Value, a.Codec, strconv.FormatInt(a.Cutoff, 10), a.Token, Millis(a.PX), "0",
		Flag(a.Fencing)}
}

// Replies of acquire.lua: {AcquireOurs, fence}, {AcquireModernHeld, pttl},
// or {AcquireLegacyHeld, state, t, modern} with state LegacyLive or
// LegacyForeign.
const (
	AcquireOurs       = 1  // acquired
	AcquireModernHeld = 0  // the modern key is held
	AcquireLegacyHeld = -1 // the legacy key is held
	LegacyLive        = 0  // the legacy value decodes and is live
	LegacyForeign     = -1 // the legacy value does not decode
)

// ReleaseArgs are release.lua's: a dual-phase lock's release.
type ReleaseArgs struct {
	LegacyKey string // KEYS[1]: the legacy key
	ModernKey string // KEYS[2]: the modern key
	Channel   string // KEYS[3]: the release channel; the modern key again when Publish is ""
	DualWrite bool   // ARGV[1]: the lock wrote the legacy key
	Token     string // ARGV[2]: the modern token
	Publish   string // ARGV[3]: "PUBLISH", "SPUBLISH" or "" for no notice
	// Owner is ARGV[4] to ARGV[9], the legacy owner window as the legacy
	// profile's OwnerArgs builds it.
	Owner []any
}

// Keys returns KEYS.
func (a ReleaseArgs) Keys() []string { return []string{a.LegacyKey, a.ModernKey, a.Channel} }

// Argv returns ARGV.
func (a ReleaseArgs) Argv() []any {
	return append([]any{Flag(a.DualWrite), a.Token, a.Publish}, a.Owner...)
}

// RefreshArgs are refresh.lua's: a dual-phase lock's refresh.
type RefreshArgs struct {
	LegacyKey string        // KEYS[1]: the legacy key
	ModernKey string        // KEYS[2]: the modern key
	DualWrite bool          // ARGV[1]: the lock wrote the legacy key
	Token     string        // ARGV[2]: the modern token
	PX        time.Duration // ARGV[3]: the modern key's new PX (whole ms)
	Value     string        // ARGV[4]: the new legacy value
	// Owner is ARGV[5] to ARGV[10], the legacy owner window of the current
	// value, as the legacy profile's OwnerArgs builds it.
	Owner []any
}

// Keys returns KEYS.
func (a RefreshArgs) Keys() []string { return []string{a.LegacyKey, a.ModernKey} }

// Argv returns ARGV.
func (a RefreshArgs) Argv() []any {
	return append([]any{Flag(a.DualWrite), a.Token, Millis(a.PX), a.Value}, a.Owner...)
}

// Replies of release.lua and refresh.lua: {modern, legacy}, modern one of
// the Modern codes (modern_release's, modern_refresh's) and legacy one of
// the Owner codes (legacy_owner's; OwnerOurs when the lock has no legacy
// half).
const (
	ModernOurs   = 1  // the modern key held our token: released, extended
	ModernTaken  = 0  // another token (or, for refresh, not attempted)
	ModernAbsent = -1 // no modern key
	OwnerOurs    = 1  // the legacy key was ours: released, rewritten
	OwnerTaken   = 0  // another value
	OwnerGone    = -1 // no legacy key
	OwnerExpired = -2 // our expiry W has passed by our own clock
	OwnerLate    = -3 // the server's clock was past W plus the margin
)

// PhaseSetArgs are phase_set.lua's: a step, an init or a repair of the
// namespace's phase.
type PhaseSetArgs struct {
	NS      Keys   // KEYS[1] to KEYS[9]: the namespace's keys (PhaseSetArgs.Keys)
	Seen    string // ARGV[1]: the phase key's value the caller saw ("" when absent)
	To      string // ARGV[2]: the new phase's name
	Publish string // ARGV[3]: "PUBLISH" or "SPUBLISH"
	MinGen  int64  // ARGV[4]: the lowest generation to write
	Mode    string // ARGV[5]: PhaseSetStep, PhaseSetInit, PhaseSetRepair or PhaseSetHistory
	// KeepInit is ARGV[6], for a repair the instance id to keep when the
	// namespace hash is gone; Silence ARGV[7], for an init how long the
	// namespace must have shown no trace.
	KeepInit int64
	Silence  time.Duration
	// Replid is ARGV[8]: for a step and a history, the server's replication
	// id the caller judged by ("" for a forced step, which checks none).
	Replid string
	// Judged is, for a step or a repair, the reading it was judged on:
	// ARGV[9], the namespace hash's "gen" then, ARGV[10], the server's time
	// after which the set sets nothing, and ARGV[11], the mark's "gen".
	// Nil: none is checked.
	Judged *PhaseSetJudged
}

// PhaseSetJudged is the reading a step or a repair was judged on
// (PhaseSetArgs.Judged).
type PhaseSetJudged struct {
	Gen     string    // the namespace hash's "gen" as read ("" when it had none)
	Until   time.Time // the reading's time by the server's clock plus the step window
	MarkGen string    // the mark's "gen" as read ("" when it had none)
}

// phase_set.lua's modes (ARGV[5]).
const (
	PhaseSetStep   = "step"
	PhaseSetInit   = "init"
	PhaseSetRepair = "repair"
	// PhaseSetHistory records a change of the server's replication id (a
	// failover or a restart) as a restore: nothing else changes.
	PhaseSetHistory = "history"
)

// Keys returns KEYS.
func (a PhaseSetArgs) Keys() []string {
	k := a.NS
	return []string{k.Phase, k.Channel, k.Since, k.Meta, k.Mark, k.Pending, k.Clients, k.Sighting, k.Fleet}
}

// Argv returns ARGV.
func (a PhaseSetArgs) Argv() []any {
	argv := []any{a.Seen, a.To, a.Publish, strconv.FormatInt(a.MinGen, 10), a.Mode, strconv.FormatInt(a.KeepInit, 10),
		Millis(a.Silence), a.Replid}
	if a.Judged != nil {
		argv = append(argv, a.Judged.Gen, strconv.FormatInt(max(a.Judged.Until.UnixMilli(), 0), 10), a.Judged.MarkGen)
	}
	return argv
}

// Replies of phase_set.lua: PhaseSetDone; for an init PhaseSetTraced, or
// minus the ms of silence left; otherwise the phase key's value (a string).
const (
	PhaseSetDone   = 1 // the phase is set
	PhaseSetTraced = 0 // an init met a trace of the namespace: nothing set
	// PhaseSetHistoryChanged: the server's replication id is not the one
	// the step was judged by (or, for a history, not the one recorded):
	// "restored" stamped, the id recorded, the phase unchanged.
	PhaseSetHistoryChanged = 2
	// PhaseSetStale: a step or repair judged on another generation of the
	// namespace or its mark (a set since its reading), or run after
	// PhaseSetJudged.Until: the phase unchanged.
	PhaseSetStale = 3
)

// PruneArgs are prune.lua's: drop registry entries dead for longer than
// Grace, at most Batch of them.
type PruneArgs struct {
	NS    Keys          // KEYS[1] to KEYS[3]: the registry hash and its two sorted sets
	Grace time.Duration // ARGV[1]
	Batch int           // ARGV[2]
}

// Keys returns KEYS.
func (a PruneArgs) Keys() []string { return []string{a.NS.Clients, a.NS.Expiry, a.NS.Seen} }

// Argv returns ARGV.
func (a PruneArgs) Argv() []any { return []any{Millis(a.Grace), strconv.Itoa(a.Batch)} }

// CleanupArgs are cleanup.lua's: remove the evidence at the end state.
type CleanupArgs struct {
	NS     Keys          // KEYS[1] to KEYS[8]: the namespace's keys (CleanupArgs.Keys)
	Since  time.Time     // ARGV[1]: the phase-since value listed
	Quiet  time.Duration // ARGV[2]: the quiet period
	Margin time.Duration // ARGV[3]: the liveness margin
	// SightingAt is ARGV[4], the sighting's "at" listed (Unix ms), or ""
	// to keep the sighting hash.
	SightingAt string
	// Replid is ARGV[5]: the server's replication id the reading was
	// judged by, or "" when it could not be read.
	Replid string
}

// Keys returns KEYS.
func (a CleanupArgs) Keys() []string {
	k := a.NS
	return []string{k.Phase, k.Since, k.Clients, k.Expiry, k.Seen, k.Sighting, k.Meta, k.Mark}
}

// Argv returns ARGV.
func (a CleanupArgs) Argv() []any {
	return []any{strconv.FormatInt(a.Since.UnixMilli(), 10), Millis(a.Quiet), Millis(a.Margin), a.SightingAt, a.Replid}
}

// Replies of cleanup.lua: {code, sighting, id...}, code one of the Cleanup
// codes and sighting CleanupSightingDeleted or CleanupSightingKept.
const (
	CleanupDone            = 1  // done
	CleanupNotModern       = -1 // the phase is not modern
	CleanupPhaseMoved      = -2 // the phase was set since it was listed
	CleanupQuiet           = -3 // the quiet period is not over
	CleanupHistoryChanged  = -4 // the server's replication id is not the one judged by
	CleanupSightingDeleted = 1
	CleanupSightingKept    = 0
)

// RegistryReadArgs are registry_read.lua's: one SCAN chunk of the registry.
type RegistryReadArgs struct {
	NS     Keys   // KEYS[1] to KEYS[3]: the registry hash and its two sorted sets
	Mode   string // ARGV[1]: RegistryEntries or RegistryOrphans
	Cursor string // ARGV[2]: the SCAN cursor
	Count  int    // ARGV[3]: the SCAN COUNT
}

// registry_read.lua's modes (ARGV[1]).
const (
	RegistryEntries = "entries"
	RegistryOrphans = "orphans"
)

// Keys returns KEYS.
func (a RegistryReadArgs) Keys() []string { return []string{a.NS.Clients, a.NS.Expiry, a.NS.Seen} }

// Argv returns ARGV.
func (a RegistryReadArgs) Argv() []any { return []any{a.Mode, a.Cursor, strconv.Itoa(a.Count)} }

// StatusArgs are status.lua's: it takes keys only.
type StatusArgs struct {
	NS Keys // KEYS[1] to KEYS[10]: the namespace's keys (StatusArgs.Keys)
}

// Keys returns KEYS.
func (a StatusArgs) Keys() []string {
	k := a.NS
	return []string{k.Phase, k.Since, k.Meta, k.Clients, k.Expiry, k.Seen, k.Fleet, k.Sighting, k.Mark, k.Pending}
}

// Argv returns ARGV: none.
func (a StatusArgs) Argv() []any { return nil }
