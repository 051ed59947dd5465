package legacy

import (
	"testing"

	"github.com/lockbridge/lockbridge/internal/protocol/legacyproto"
	"github.com/lockbridge/lockbridge/internal/testing/scripttest"
)

// TestScriptHeaders checks each script's Go caller against its header: the
// argument struct builds the KEYS and ARGV the header declares, in its
// order, and the reply codes the header names are the Go constants.
func TestScriptHeaders(t *testing.T) {
	owner := map[string]int64{"ownerOurs": ownerOurs, "ownerTaken": ownerTaken, "ownerGone": ownerGone,
		"ownerExpired": ownerExpired, "ownerLate": ownerLate}
	key := [1]string{"k"}
	window := legacyproto.OwnerWindow{Codec: "decimal", Unit: "ms", W: "1700000000000", Lease: "30000",
		Now: "1699999990000", Margin: "1000"}
	ownerArgv := map[string]any{"KEYS[1]": "k", "ARGV[1]": "decimal", "ARGV[2]": "ms", "ARGV[3]": "1700000000000",
		"ARGV[4]": "30000", "ARGV[5]": "1699999990000", "ARGV[6]": "1000"}
	refreshArgv := map[string]any{"ARGV[7]": "1700000030000", "ARGV[8]": "60000"}
	for k, v := range ownerArgv {
		refreshArgv[k] = v
	}

	t.Run("acquire.lua", func(t *testing.T) {
		a := acquireArgs{key: "k", value: "1700000000000", codec: "decimal", cutoff: "1699999999000", safety: "0"}
		scripttest.Args(t, acquireSrc, a.keys(), a.argv(), map[string]any{"KEYS[1]": "k",
			"ARGV[1]": "1700000000000", "ARGV[2]": "decimal", "ARGV[3]": "1699999999000", "ARGV[4]": "0"})
		scripttest.Codes(t, acquireSrc, map[string]int64{"stateFree": stateFree, "stateExpired": stateExpired,
			"stateLive": stateLive, "stateForeign": stateForeign})
	})
	t.Run("release.lua", func(t *testing.T) {
		a := releaseArgs{key: &key, window: window}
		scripttest.Args(t, releaseSrc, a.keys(), a.argv(nil), ownerArgv)
		scripttest.Codes(t, releaseSrc, owner)
	})
	t.Run("refresh.lua", func(t *testing.T) {
		a := refreshArgs{key: &key, window: window, value: "1700000030000", safety: "60000"}
		scripttest.Args(t, refreshSrc, a.keys(), a.argv(nil), refreshArgv)
		scripttest.Codes(t, refreshSrc, owner)
	})
}
