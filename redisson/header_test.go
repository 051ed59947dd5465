package redisson

import (
	"testing"
	"time"

	"github.com/lockbridge/lockbridge/internal/testing/scripttest"
)

// TestScriptHeaders checks each script's Go caller against its header: the
// argument struct builds the KEYS and ARGV the header declares, in its
// order, and the reply codes the header names are the Go constants.
func TestScriptHeaders(t *testing.T) {
	release := map[string]int64{"releaseKept": releaseKept, "releaseDone": releaseDone,
		"releaseLatchGone": releaseLatchGone}
	force := map[string]int64{"forceDeleted": forceDeleted, "forceAbsent": forceAbsent}
	lease, life := 30*time.Second, 10*time.Second
	for _, c := range []struct {
		name  string
		src   string
		keys  []string
		argv  []any
		want  map[string]any
		codes map[string]int64
	}{
		{"acquire.lua", acquireSrc, acquireArgs{"k", lease, "f"}.keys(), acquireArgs{"k", lease, "f"}.argv(),
			map[string]any{"KEYS[1]": "k", "ARGV[1]": 30000, "ARGV[2]": "f"}, map[string]int64{}},
		{"fenced_acquire.lua", fencedAcquireSrc, fencedAcquireArgs{"k", "t", lease, "f"}.keys(),
			fencedAcquireArgs{"k", "t", lease, "f"}.argv(),
			map[string]any{"KEYS[1]": "k", "KEYS[2]": "t", "ARGV[1]": 30000, "ARGV[2]": "f"},
			map[string]int64{"fencedNone": fencedNone}},
		{"renew.lua", renewSrc, renewArgs{"k", lease, "f"}.keys(), renewArgs{"k", lease, "f"}.argv(),
			map[string]any{"KEYS[1]": "k", "ARGV[1]": 30000, "ARGV[2]": "f"},
			map[string]int64{"renewed": renewed, "renewGone": renewGone}},
		{"release.lua", releaseSrc, releaseArgs{"k", "c", "l", "f", lease, "PUBLISH", life, true}.keys(),
			releaseArgs{"k", "c", "l", "f", lease, "PUBLISH", life, true}.argv(),
			map[string]any{"KEYS[1]": "k", "KEYS[2]": "c", "KEYS[3]": "l", "ARGV[1]": "f", "ARGV[2]": 30000,
				"ARGV[3]": "PUBLISH", "ARGV[4]": 10000, "ARGV[5]": "1"}, release},
		{"force_unlock.lua", forceUnlockSrc, forceUnlockArgs{"k", "c", "SPUBLISH"}.keys(),
			forceUnlockArgs{"k", "c", "SPUBLISH"}.argv(),
			map[string]any{"KEYS[1]": "k", "KEYS[2]": "c", "ARGV[1]": "SPUBLISH"}, force},
		{"fair_try.lua", fairTrySrc, fairTryArgs{"k", "q", "t", lease, "f", 7, life}.keys(),
			fairTryArgs{"k", "q", "t", lease, "f", 7, life}.argv(),
			map[string]any{"KEYS[1]": "k", "KEYS[2]": "q", "KEYS[3]": "t", "ARGV[1]": 30000, "ARGV[2]": "f",
				"ARGV[3]": 7, "ARGV[4]": 10000}, map[string]int64{"fairTryRefused": fairTryRefused}},
		{"fair_acquire.lua", fairAcquireSrc, fairAcquireArgs{"k", "q", "t", lease, "f", life, 7}.keys(),
			fairAcquireArgs{"k", "q", "t", lease, "f", life, 7}.argv(),
			map[string]any{"KEYS[1]": "k", "KEYS[2]": "q", "KEYS[3]": "t", "ARGV[1]": 30000, "ARGV[2]": "f",
				"ARGV[3]": 10000, "ARGV[4]": 7}, map[string]int64{}},
		{"fair_dequeue.lua", fairDequeueSrc, fairDequeueArgs{"q", "t", "f", life}.keys(),
			fairDequeueArgs{"q", "t", "f", life}.argv(),
			map[string]any{"KEYS[1]": "q", "KEYS[2]": "t", "ARGV[1]": "f", "ARGV[2]": 10000}, map[string]int64{}},
		{"fair_release.lua", fairReleaseSrc,
			fairReleaseArgs{"k", "q", "t", "c", "l", "f", lease, 7, "PUBLISH", life, false}.keys(),
			fairReleaseArgs{"k", "q", "t", "c", "l", "f", lease, 7, "PUBLISH", life, false}.argv(),
			map[string]any{"KEYS[1]": "k", "KEYS[2]": "q", "KEYS[3]": "t", "KEYS[4]": "c", "KEYS[5]": "l",
				"ARGV[1]": "f", "ARGV[2]": 30000, "ARGV[3]": 7, "ARGV[4]": "PUBLISH", "ARGV[5]": 10000,
				"ARGV[6]": "0"}, release},
		{"fair_force_unlock.lua", fairForceUnlockSrc, fairForceUnlockArgs{"k", "q", "t", "c", 7, "PUBLISH"}.keys(),
			fairForceUnlockArgs{"k", "q", "t", "c", 7, "PUBLISH"}.argv(),
			map[string]any{"KEYS[1]": "k", "KEYS[2]": "q", "KEYS[3]": "t", "KEYS[4]": "c", "ARGV[1]": 7,
				"ARGV[2]": "PUBLISH"}, force},
	} {
		t.Run(c.name, func(t *testing.T) {
			scripttest.Args(t, c.src, c.keys, c.argv, c.want)
			scripttest.Codes(t, c.src, c.codes)
		})
	}
}
