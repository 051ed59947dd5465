package lockbridge_test

import (
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const module = "github.com/lockbridge/lockbridge"

// moduleImports maps each package directory of the module (bench/ is a
// module of its own) to the module packages its code imports, and to those
// its tests import.
func moduleImports(t *testing.T) (code, tests map[string]map[string]bool) {
	t.Helper()
	code, tests = map[string]map[string]bool{}, map[string]map[string]bool{}
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p == "bench" || p == "testdata" || (p != "." && strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		dir := filepath.ToSlash(filepath.Dir(p))
		imports := code
		if strings.HasSuffix(p, "_test.go") {
			imports = tests
		}
		if imports[dir] == nil {
			imports[dir] = map[string]bool{}
		}
		for _, im := range f.Imports {
			ip, _ := strconv.Unquote(im.Path.Value)
			switch {
			case ip == module:
				imports[dir]["."] = true
			case strings.HasPrefix(ip, module+"/"):
				imports[dir][strings.TrimPrefix(ip, module+"/")] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return code, tests
}

// The layers of the module, bottom first (docs/architecture.md). A package
// belongs to the layer of the longest prefix that matches its directory. The
// code of a package (its non-test files) may import packages of lower layers
// and of its own layer; in a layer marked apart, only of its own directory
// tree (the lock packages do not import one another: migrate, which is built
// on legacy and modern, is the layer above them). Tests are not layered: an
// adapter's tests drive real locks through it and the root package's tests
// are the cross-scheme matrix; TestInternalImportsNoLockPackage keeps the
// tests of internal/ below the locks.
var layers = []struct {
	name     string
	prefixes []string
	apart    bool
}{
	{name: "root", prefixes: []string{"."}},
	{name: "driver", prefixes: []string{"driver"}},
	{name: "runtime", prefixes: []string{"internal/runtime"}},
	{name: "protocol", prefixes: []string{"internal/protocol"}},
	{name: "testing", prefixes: []string{"internal/testing"}},
	{name: "locks", prefixes: []string{"legacy", "modern", "redlock", "redisson"}, apart: true},
	{name: "migrate", prefixes: []string{"migrate"}},
	{name: "kits", prefixes: []string{"adaptertest"}},
	{name: "top", prefixes: []string{"cmd", "examples", "interop", "soak", "model", "scripts"}},
}

// layerOf returns the index in layers of dir's layer and the prefix that
// placed it there; -1 when no layer claims dir.
func layerOf(dir string) (int, string) {
	best, bestPrefix := -1, ""
	for i, l := range layers {
		for _, p := range l.prefixes {
			match := dir == p || (p != "." && strings.HasPrefix(dir, p+"/"))
			if match && len(p) > len(bestPrefix) {
				best, bestPrefix = i, p
			}
		}
	}
	return best, bestPrefix
}

// layerViolations lists the imports of code that break the layering: an
// import of a higher layer, or of another directory tree of a layer kept
// apart. Directories no layer claims are reported too.
func layerViolations(code map[string]map[string]bool) []string {
	var out []string
	for dir, imports := range code {
		li, lp := layerOf(dir)
		if li < 0 {
			out = append(out, fmt.Sprintf("%s belongs to no layer: add it to layers (layout_test.go) "+
				"and docs/architecture.md", dir))
			continue
		}
		for im := range imports {
			mi, mp := layerOf(im)
			switch {
			case mi < 0:
				out = append(out, fmt.Sprintf("%s imports %s, which belongs to no layer", dir, im))
			case mi > li:
				out = append(out, fmt.Sprintf("%s (layer %s) imports %s (layer %s, above it)", dir, layers[li].name, im,
					layers[mi].name))
			case mi == li && layers[li].apart && mp != lp:
				out = append(out, fmt.Sprintf("%s imports %s: the %s layer's packages do not import one another", dir, im,
					layers[li].name))
			}
		}
	}
	sort.Strings(out)
	return out
}

// Imports go one way, down the layers: root ← driver ← internal/runtime ←
// internal/protocol ← internal/testing ← the lock packages ← migrate ←
// adaptertest ← cmd, examples and the test-only trees. In particular driver/
// imports nothing of the module but the root package.
func TestLayoutImportsGoDown(t *testing.T) {
	code, _ := moduleImports(t)
	require.Contains(t, code, "driver", "the walk found the module's packages")
	for _, v := range layerViolations(code) {
		t.Error(v)
	}
}

// The check itself catches a wrong-direction import, of each kind.
func TestLayoutCatchesAnUpwardImport(t *testing.T) {
	for _, tc := range []struct{ dir, im, want string }{
		{"driver/goredis", "internal/runtime/notify", "above it"},
		{"driver", ".", ""},
		{"internal/runtime/retry", "internal/protocol/luafrag", "above it"},
		{"internal/protocol/modernproto", "internal/testing/redistest", "above it"},
		{"internal/testing/locktest", "modern", "above it"},
		{"redlock", "modern", "do not import one another"},
		{"legacy", "migrate", "above it"},
		{"migrate", "legacy", ""},
		{"modern", "adaptertest", "above it"},
		{"adaptertest", "cmd/lockbridge/internal/doctor", "above it"},
		{"newdir", ".", "belongs to no layer"},
	} {
		got := layerViolations(map[string]map[string]bool{tc.dir: {tc.im: true}})
		if tc.want == "" {
			assert.Empty(t, got, "%s → %s", tc.dir, tc.im)
			continue
		}
		if assert.Len(t, got, 1, "%s → %s", tc.dir, tc.im) {
			assert.Contains(t, got[0], tc.want)
		}
	}
}

// isLock reports whether dir is a public lock package or below one.
func isLock(dir string) bool {
	i, _ := layerOf(dir)
	return i >= 0 && (layers[i].name == "locks" || layers[i].name == "migrate")
}

// Nothing under internal/ imports a public lock package, directly or through
// another package of the module, in its code or its tests (internal/ is
// runtime, protocol and test fixtures, below the locks: the locks' tests
// import the fixtures).
func TestInternalImportsNoLockPackage(t *testing.T) {
	code, tests := moduleImports(t)
	dirs := map[string]bool{}
	for dir := range code {
		dirs[dir] = true
	}
	for dir := range tests {
		dirs[dir] = true
	}
	for dir := range dirs {
		if !strings.HasPrefix(dir, "internal/") {
			continue
		}
		// Depth-first over the code the package and its tests import,
		// keeping the path.
		seen := map[string]bool{dir: true}
		var walk func(imports map[string]bool, via string)
		walk = func(imports map[string]bool, via string) {
			for im := range imports {
				if isLock(im) {
					t.Errorf("%s imports %s (via %s): internal/ must not import a lock package", dir, im, via)
					continue
				}
				if !seen[im] {
					seen[im] = true
					walk(code[im], via+" → "+im)
				}
			}
		}
		walk(code[dir], dir)
		walk(tests[dir], dir+" (tests)")
	}
}
