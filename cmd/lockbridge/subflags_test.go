package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// helpSections splits a --help into its description (before "Flags:"), its
// own flags and its global flags.
func helpSections(t *testing.T, out string) (desc, own, global string) {
	t.Helper()
	desc, rest, _ := strings.Cut(out, "\nFlags:\n")
	own, global, _ = strings.Cut(rest, "\nGlobal flags:\n")
	return desc, own, global
}

// TestSubcommandHelp: each phase subcommand and fleet forget has its own
// description and lists its own flags as its own, and only those.
func TestSubcommandHelp(t *testing.T) {
	t.Parallel()
	all := []string{"--force", "--quiet", "--silence", "--maxmemory-policy", "--to", "--watch", "--interval"}
	for _, tc := range []struct {
		args  []string
		desc  string
		flags []string
	}{
		{[]string{"phase", "get"}, "Print the namespace's phase", nil},
		{[]string{"phase", "set"}, "Move the fleet one step to PHASE", []string{"--force", "--quiet", "--maxmemory-policy"}},
		{[]string{"phase", "init"}, "Give a namespace without a phase its phase", []string{"--silence", "--force",
			"--maxmemory-policy"}},
		{[]string{"phase", "repair"}, "Set a phase that was lost", []string{"--to", "--force", "--maxmemory-policy"}},
		{[]string{"fleet", "forget"}, "Remove the client ID, known dead", []string{"--force"}},
		{[]string{"fleet", "cleanup"}, "Remove what the migration leaves behind", []string{"--quiet", "--key", "--margin",
			"--dry-run"}},
		{[]string{"fleet"}, "List the namespace's clients", []string{"--quiet", "--watch", "--interval"}},
	} {
		r := cli(t, "", nil, append(tc.args, "--help")...)
		assert.Equal(t, 0, r.code, "%v", tc.args)
		desc, own, global := helpSections(t, r.stdout)
		assert.Contains(t, desc, "\n\n"+tc.desc, "%v: its own description", tc.args)
		for _, f := range all {
			want := false
			for _, g := range tc.flags {
				want = want || g == f
			}
			if want {
				assert.Contains(t, own, f+" ", "%v: %s is its own flag", tc.args, f)
			} else {
				assert.NotContains(t, own, f+" ", "%v: %s is not its flag", tc.args, f)
			}
			assert.NotContains(t, global, f+" ", "%v: %s is not a global flag", tc.args, f)
		}
	}
	// The parent's help names the subcommands, not their flags.
	r := cli(t, "", nil, "phase", "--help")
	_, own, global := helpSections(t, r.stdout)
	for _, f := range all {
		assert.NotContains(t, own+global, f+" ", "phase --help: %s", f)
	}
}

// TestSubcommandFlagsRefused: a flag that means nothing to a command is a
// usage error, not ignored.
func TestSubcommandFlagsRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"phase", "get", "--to", "modern"}, "unknown flag: --to"},
		{[]string{"phase", "get", "--force"}, "unknown flag: --force"},
		{[]string{"phase", "get", "--silence", "1s"}, "unknown flag: --silence"},
		{[]string{"phase", "set", "dual-write", "--silence", "1s"}, "unknown flag: --silence"},
		{[]string{"phase", "set", "dual-write", "--to", "modern"}, "unknown flag: --to"},
		{[]string{"phase", "init", "--to", "modern"}, "unknown flag: --to"},
		{[]string{"phase", "init", "--quiet", "1h"}, "unknown flag: --quiet"},
		{[]string{"phase", "repair", "--to", "legacy", "--silence", "1s"}, "unknown flag: --silence"},
		{[]string{"phase", "repair", "--to", "legacy", "--quiet", "1h"}, "unknown flag: --quiet"},
		{[]string{"fleet", "forget", "x", "--quiet", "1h"}, "unknown flag: --quiet"},
		{[]string{"fleet", "forget", "x", "--watch"}, "unknown flag: --watch"},
		{[]string{"fleet", "cleanup", "--namespace", "n", "--force"}, "fleet cleanup has no --force"},
		{[]string{"phase", "--force", "set", "modern"},
			"--force is a flag of phase init, repair, set: give it after the subcommand"},
		{[]string{"fleet", "--force", "forget", "x"}, "--force is a flag of fleet forget"},
	} {
		r := cli(t, "", nil, append(tc.args, "--redis", "redis://127.0.0.1:1")...)
		oneLineError(t, r, 2, tc.want)
		assert.Empty(t, r.stdout, "%v", tc.args)
	}
}

// TestUsageExitCodes: a shell without a completion script and a port out
// of range are bad usage (exit 2), like any other.
func TestUsageExitCodes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"completion", "tcsh"}, `completion: no script for shell "tcsh": want bash, zsh, fish or powershell`},
		{[]string{"completion"}, "completion: want a shell"},
		{[]string{"phase", "get", "--redis", "redis://127.0.0.1:65536"},
			`bad Redis URL redis://127.0.0.1:65536: port "65536"`},
		{[]string{"inspect", "k", "--cluster", "h:-1"}, `bad --cluster address "h:-1"`},
	} {
		r := cli(t, "", nil, tc.args...)
		oneLineError(t, r, 2, tc.want)
		assert.Empty(t, r.stdout, "%v", tc.args)
	}
}
