package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The valkey-go adapter's generated files are what the rueidis adapter's
// translate to: a change to one adapter reaches the other.
func TestGeneratedFilesUpToDate(t *testing.T) {
	wd, err := os.Getwd()
	require.NoError(t, err)
	root, err := Root(wd)
	require.NoError(t, err)
	for _, p := range Pairs {
		src, err := os.ReadFile(filepath.Join(root, p[0]))
		require.NoError(t, err)
		got, err := os.ReadFile(filepath.Join(root, p[1]))
		require.NoError(t, err)
		assert.Equal(t, string(Translate(src)), string(got),
			"%s is out of date: run go generate ./driver/internal/rueidiscore", p[1])
	}
}

func TestTranslateKeepsTheCore(t *testing.T) {
	got := string(Translate([]byte(`rueidiscore.Check(c, "rueidis") // rueidis.Client`)))
	assert.Equal(t, Header+`rueidiscore.Check(c, "valkey") // valkey.Client`, got)
}
