package modernproto

import (
	"testing"
	"time"

	"github.com/lockbridge/lockbridge/internal/testing/scripttest"
)

// TestScriptHeaders checks each script's Go caller against its body file's
// header: the argument struct builds the KEYS and ARGV the header declares,
// in its order, and the reply codes the header names are the Go constants.
func TestScriptHeaders(t *testing.T) {
	n, ok := NewNames("{k}", true)
	if !ok {
		t.Fatal("no names")
	}
	codes := map[string]int64{"Ours": Ours, "Taken": Taken, "Absent": Absent}
	for _, c := range []struct {
		name  string
		body  string
		keys  []string
		argv  []any
		want  map[string]any
		codes map[string]int64
	}{
		{"acquire.lua", acquireBody,
			acquireArgs{names: &n, token: "tok", ttl: 1500 * time.Millisecond}.keys(),
			acquireArgs{names: &n, token: "tok", ttl: 1500 * time.Millisecond}.argv(),
			map[string]any{"KEYS[1]": "{k}", "KEYS[2]": "{k}:fence", "ARGV[1]": "tok", "ARGV[2]": 1500},
			map[string]int64{"Ours": Ours, "Taken": Taken}},
		{"release.lua", releaseBody,
			releaseArgs{names: &n, token: "tok", publish: "PUBLISH"}.keys(),
			releaseArgs{names: &n, token: "tok", publish: "PUBLISH"}.argv(),
			map[string]any{"KEYS[1]": "{k}", "KEYS[2]": "{k}:released", "ARGV[1]": "tok", "ARGV[2]": "PUBLISH"},
			codes},
		{"refresh.lua", refreshBody,
			refreshArgs{names: &n, token: "tok", ttl: 2 * time.Second}.keys(),
			refreshArgs{names: &n, token: "tok", ttl: 2 * time.Second}.argv(),
			map[string]any{"KEYS[1]": "{k}", "ARGV[1]": "tok", "ARGV[2]": 2000},
			codes},
		{"ttl.lua", ttlBody,
			ttlArgs{names: &n, token: "tok"}.keys(), ttlArgs{names: &n, token: "tok"}.argv(),
			map[string]any{"KEYS[1]": "{k}", "ARGV[1]": "tok"},
			codes},
	} {
		t.Run(c.name, func(t *testing.T) {
			scripttest.Args(t, c.body, c.keys, c.argv, c.want)
			scripttest.Codes(t, c.body, c.codes)
		})
	}
}
