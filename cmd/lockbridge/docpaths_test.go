package main

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDocPathsExist: every repository file docs/cli.md names in backquotes
// exists.
func TestDocPathsExist(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	doc, err := os.ReadFile(filepath.Join(root, "docs", "cli.md"))
	require.NoError(t, err)
	paths := regexp.MustCompile(
		"`((?:cmd|docs|internal|migrate|legacy|modern|redisson|redlock|driver|testdata)/[^` ]+\\.(?:lua|go|md|json))`").FindAllSubmatch(doc, -1)
	require.NotEmpty(t, paths, "the check sees the paths")
	for _, m := range paths {
		_, err := os.Stat(filepath.Join(root, string(m[1])))
		assert.NoError(t, err, "docs/cli.md names %s", m[1])
	}
}
