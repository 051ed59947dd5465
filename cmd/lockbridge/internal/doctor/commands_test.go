package doctor

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The library's sources: the repository without the CLI, the benchmarks,
// doctor itself and the test fixtures.
func librarySources(t *testing.T, ext string, fn func(path, src string)) {
	t.Helper()
	root, err := filepath.Abs("../../../..")
	require.NoError(t, err)
	skip := map[string]bool{"bench": true, "cmd": true, "testdata": true, ".git": true, "soak": true, "model": true,
		"testing": true, "resp": true, "adaptertest": true}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && skip[d.Name()] {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ext) || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		rel, _ := filepath.Rel(root, path)
		fn(rel, string(b))
		return nil
	})
	require.NoError(t, err)
}

// TestDoctorCommandsCoverCode reads every command the library's scripts
// and Go code send and checks that doctor's list has it, in the right
// scope: a command added to a script must be probed inside a script.
func TestDoctorCommandsCoverCode(t *testing.T) {
	t.Parallel()
	known := map[string]Scope{}
	for _, c := range Commands() {
		known[c.Name] |= c.Scope
	}
	lua := regexp.MustCompile(`redis\.p?call\(\s*'([A-Za-z]+)'`)
	dynamic := regexp.MustCompile(`redis\.p?call\(\s*([A-Za-z_][A-Za-z_0-9\[\]]*)\s*,`)
	var inScripts, direct []string
	librarySources(t, ".lua", func(path, src string) {
		for _, m := range lua.FindAllStringSubmatch(src, -1) {
			inScripts = append(inScripts, strings.ToUpper(m[1])+" ("+path+")")
			assert.NotZero(t, known[strings.ToUpper(m[1])]&InScript, "%s calls %s: add it to doctor's commands as InScript",
				path, m[1])
		}
		for _, m := range dynamic.FindAllStringSubmatch(src, -1) {
			// The only commands chosen at run time are the publish
			// commands, which every script that picks one checks against
			// its list ('PUBLISH', 'SPUBLISH').
			assert.Contains(t, src, "PUBLISH", "%s calls a command named by %s: add what it can be to doctor's commands", path,
				m[1])
		}
	})
	goCmd := regexp.MustCompile(`(?:Do\([a-zA-Z]*[cC]tx, |append\(a, |c\.do\(ctx, |stringReply\(ctx, )"([A-Z]+)"`)
	librarySources(t, ".go", func(path, src string) {
		for _, m := range goCmd.FindAllStringSubmatch(src, -1) {
			direct = append(direct, m[1]+" ("+path+")")
			assert.NotZero(t, known[m[1]]&Direct, "%s sends %s: add it to doctor's commands as Direct", path, m[1])
		}
	})
	sort.Strings(inScripts)
	sort.Strings(direct)
	// The scan must see something, or it checks nothing.
	assert.Contains(t, strings.Join(inScripts, " "), "TIME (internal/protocol/luafrag/legacy_now.lua)")
	assert.Contains(t, strings.Join(direct, " "), "GETSET (driver/adapter/adapter.go)")
	assert.Contains(t, strings.Join(inScripts, " "), "HGETALL (migrate/scripts/status.lua)")
	assert.Contains(t, strings.Join(direct, " "), "PEXPIRE (legacy/classic.go)")
	for _, pub := range []string{"PUBLISH", "SPUBLISH"} {
		assert.NotZero(t, known[pub]&InScript, pub)
	}
	var redissonSrc strings.Builder
	librarySources(t, ".go", func(path, src string) {
		if strings.HasPrefix(filepath.ToSlash(path), "redisson/") {
			redissonSrc.WriteString(src)
		}
	})
	for _, pub := range []string{`"PUBLISH"`, `"SPUBLISH"`} {
		assert.Contains(t, redissonSrc.String(), pub, "the redisson package names the publish commands its scripts may call")
	}
}

// The probe script sends every command the scripts send.
func TestDoctorProbeCoversScriptCommands(t *testing.T) {
	t.Parallel()
	for _, cluster := range []bool{false, true} {
		sent := map[string]bool{}
		for _, call := range scriptCalls(probeKeys{}, cluster) {
			sent[call[0]] = true
		}
		for _, c := range Commands() {
			if c.Scope&InScript != 0 && c.applies(cluster) {
				assert.True(t, sent[c.Name], "cluster %v: the probe script does not send %s", cluster, c.Name)
			}
		}
	}
}
