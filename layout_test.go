package lockbridge_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
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

// isLock reports whether dir is a public lock package or below one.
func isLock(dir string) bool {
	for _, l := range []string{"legacy", "modern", "migrate", "redlock"} {
		if dir == l || strings.HasPrefix(dir, l+"/") {
			return true
		}
	}
	return false
}

// The layering: driver ← the lock packages ← migrate ← cmd. Nothing under
// internal/ imports a public lock package, directly or through another
// package of the module, in its code or its tests (internal/ is protocol,
// runtime and test fixtures, below the locks).
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
