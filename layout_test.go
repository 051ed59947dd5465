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

// The layering: driver ← the lock packages ← migrate ← cmd. Nothing under
// internal/ imports a public lock package (internal/ is protocol, runtime
// and test fixtures, below the locks).
func TestInternalImportsNoLockPackage(t *testing.T) {
	locks := []string{"legacy", "modern", "migrate", "redlock"}
	err := filepath.WalkDir("internal", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			for _, l := range locks {
				if p == "github.com/lockbridge/lockbridge/"+l || strings.HasPrefix(p, "github.com/lockbridge/lockbridge/"+l+"/") {
					t.Errorf("%s imports %s: internal/ must not import a lock package", path, p)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
