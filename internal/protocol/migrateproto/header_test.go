package migrateproto

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge/internal/testing/scripttest"
)

// TestScriptHeaders checks each script's Go caller against its header: the
// argument struct builds the KEYS and ARGV the header declares, in its
// order, and the reply codes the header names are the Go constants.
func TestScriptHeaders(t *testing.T) {
	k, err := NewKeys("ns")
	require.NoError(t, err)
	owner := []any{"ms-decimal", "ms", "1700", "30000", "1650", "500"}
	dual := map[string]int64{"ModernOurs": ModernOurs, "ModernTaken": ModernTaken, "ModernAbsent": ModernAbsent,
		"OwnerOurs": OwnerOurs, "OwnerTaken": OwnerTaken, "OwnerGone": OwnerGone, "OwnerExpired": OwnerExpired,
		"OwnerLate": OwnerLate}
	acquire := AcquireArgs{LegacyKey: "l", ModernKey: "m", FenceKey: "f", DualWrite: true, Value: "1700",
		Codec:  "ms-decimal",
		Cutoff: 1600, Token: "t", PX: 30 * time.Second, Fencing: true}
	release := ReleaseArgs{LegacyKey: "l", ModernKey: "m", Channel: "c", DualWrite: true, Token: "t", Publish: "PUBLISH",
		Owner: owner}
	refresh := RefreshArgs{LegacyKey: "l", ModernKey: "m", DualWrite: false, Token: "t", PX: 2 * time.Second,
		Value: "1800", Owner: owner}
	phaseSet := PhaseSetArgs{NS: k, Seen: "legacy", To: "dual-write", Publish: "SPUBLISH", MinGen: 7, Mode: PhaseSetRepair,
		KeepInit: 9, Silence: 3 * time.Second, Replid: "8c1f", Judged: &PhaseSetJudged{Gen: "1700", Until: time.UnixMilli(4321),
			MarkGen: "1690"}}
	prune := PruneArgs{NS: k, Grace: time.Minute, Batch: 200}
	cleanup := CleanupArgs{NS: k, Since: time.UnixMilli(1234), Quiet: time.Hour, Margin: time.Second, SightingAt: "99",
		Replid: "8c1f"}
	read := RegistryReadArgs{NS: k, Mode: RegistryOrphans, Cursor: "17", Count: 200}
	status := StatusArgs{NS: k}
	heartbeat := HeartbeatArgs{NS: k, Entry: Entry{ID: "c1", Seq: 5}, Hold: 0}
	forget := ForgetArgs{NS: k, ID: "c1", Force: true, Margin: 2 * time.Second}
	sighting := SightingArgs{NS: k, LegacyKey: "l"}
	for _, c := range []struct {
		name  string
		src   string
		keys  []string
		argv  []any
		want  map[string]any
		codes map[string]int64
	}{
		{"acquire.lua", acquireSrc, acquire.Keys(), acquire.Argv(),
			map[string]any{"KEYS[1]": "l", "KEYS[2]": "m", "KEYS[3]": "f", "ARGV[1]": "1", "ARGV[2]": "1700",
				"ARGV[3]": "ms-decimal", "ARGV[4]": 1600, "ARGV[5]": "t", "ARGV[6]": 30000, "ARGV[7]": "0", "ARGV[8]": "1"},
			map[string]int64{"AcquireOurs": AcquireOurs, "AcquireModernHeld": AcquireModernHeld,
				"AcquireLegacyHeld": AcquireLegacyHeld, "LegacyLive": LegacyLive, "LegacyForeign": LegacyForeign}},
		{"release.lua", releaseSrc, release.Keys(), release.Argv(),
			map[string]any{"KEYS[1]": "l", "KEYS[2]": "m", "KEYS[3]": "c", "ARGV[1]": "1", "ARGV[2]": "t",
				"ARGV[3]": "PUBLISH", "ARGV[4]": "ms-decimal", "ARGV[5]": "ms", "ARGV[6]": 1700, "ARGV[7]": 30000,
				"ARGV[8]": 1650, "ARGV[9]": 500}, dual},
		{"refresh.lua", refreshSrc, refresh.Keys(), refresh.Argv(),
			map[string]any{"KEYS[1]": "l", "KEYS[2]": "m", "ARGV[1]": "0", "ARGV[2]": "t", "ARGV[3]": 2000,
				"ARGV[4]": "1800", "ARGV[5]": "ms-decimal", "ARGV[6]": "ms", "ARGV[7]": 1700, "ARGV[8]": 30000,
				"ARGV[9]": 1650, "ARGV[10]": 500}, dual},
		{"phase_set.lua", phaseSetSrc, phaseSet.Keys(), phaseSet.Argv(),
			map[string]any{"KEYS[1]": k.Phase, "KEYS[2]": k.Channel, "KEYS[3]": k.Since, "KEYS[4]": k.Meta,
				"KEYS[5]": k.Mark, "KEYS[6]": k.Pending, "KEYS[7]": k.Clients, "KEYS[8]": k.Sighting, "KEYS[9]": k.Fleet,
				"ARGV[1]": "legacy", "ARGV[2]": "dual-write", "ARGV[3]": "SPUBLISH", "ARGV[4]": 7, "ARGV[5]": "repair",
				"ARGV[6]": 9, "ARGV[7]": 3000, "ARGV[8]": "8c1f", "ARGV[9]": "1700", "ARGV[10]": 4321,
				"ARGV[11]": "1690"},
			map[string]int64{"PhaseSetDone": PhaseSetDone, "PhaseSetTraced": PhaseSetTraced,
				"PhaseSetHistoryChanged": PhaseSetHistoryChanged, "PhaseSetStale": PhaseSetStale}},
		{"prune.lua", pruneSrc, prune.Keys(), prune.Argv(),
			map[string]any{"KEYS[1]": k.Clients, "KEYS[2]": k.Expiry, "KEYS[3]": k.Seen, "ARGV[1]": 60000, "ARGV[2]": 200},
			map[string]int64{}},
		{"cleanup.lua", cleanupSrc, cleanup.Keys(), cleanup.Argv(),
			map[string]any{"KEYS[1]": k.Phase, "KEYS[2]": k.Since, "KEYS[3]": k.Clients, "KEYS[4]": k.Expiry,
				"KEYS[5]": k.Seen, "KEYS[6]": k.Sighting, "KEYS[7]": k.Meta, "KEYS[8]": k.Mark, "ARGV[1]": 1234,
				"ARGV[2]": 3600000, "ARGV[3]": 1000, "ARGV[4]": "99", "ARGV[5]": "8c1f"},
			map[string]int64{"CleanupDone": CleanupDone, "CleanupNotModern": CleanupNotModern,
				"CleanupPhaseMoved": CleanupPhaseMoved, "CleanupQuiet": CleanupQuiet,
				"CleanupHistoryChanged":  CleanupHistoryChanged,
				"CleanupSightingDeleted": CleanupSightingDeleted, "CleanupSightingKept": CleanupSightingKept}},
		{"registry_read.lua", registryReadSrc, read.Keys(), read.Argv(),
			map[string]any{"KEYS[1]": k.Clients, "KEYS[2]": k.Expiry, "KEYS[3]": k.Seen, "ARGV[1]": "orphans",
				"ARGV[2]": "17", "ARGV[3]": 200}, map[string]int64{}},
		{"status.lua", statusSrc, status.Keys(), status.Argv(),
			map[string]any{"KEYS[1]": k.Phase, "KEYS[2]": k.Since, "KEYS[3]": k.Meta, "KEYS[4]": k.Clients,
				"KEYS[5]": k.Expiry, "KEYS[6]": k.Seen, "KEYS[7]": k.Fleet, "KEYS[8]": k.Sighting, "KEYS[9]": k.Mark,
				"KEYS[10]": k.Pending}, map[string]int64{}},
		{"heartbeat.lua", heartbeatSrc, heartbeat.Keys(), heartbeat.argv(""),
			map[string]any{"KEYS[1]": k.Phase, "KEYS[2]": k.Meta, "KEYS[3]": k.Clients, "KEYS[4]": k.Expiry,
				"KEYS[5]": k.Seen, "ARGV[1]": "c1", "ARGV[2]": 5, "ARGV[3]": 1, "ARGV[4]": "", "ARGV[5]": ""},
			map[string]int64{"HeartbeatWritten": HeartbeatWritten, "HeartbeatStale": HeartbeatStale,
				"HeartbeatNoEntry": HeartbeatNoEntry}},
		{"forget.lua", forgetSrc, forget.Keys(), forget.Argv(),
			map[string]any{"KEYS[1]": k.Clients, "KEYS[2]": k.Expiry, "KEYS[3]": k.Seen, "KEYS[4]": k.Fleet,
				"ARGV[1]": "c1", "ARGV[2]": "1", "ARGV[3]": 2000}, map[string]int64{"ForgetLive": ForgetLive,
				"ForgetNoExpiry": ForgetNoExpiry}},
		{"sighting.lua", sightingSrc, sighting.Keys(), sighting.Argv(),
			map[string]any{"KEYS[1]": k.Sighting, "KEYS[2]": k.Meta, "ARGV[1]": "l"}, map[string]int64{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			scripttest.Args(t, c.src, c.keys, c.argv, c.want)
			scripttest.Codes(t, c.src, c.codes)
		})
	}
}
