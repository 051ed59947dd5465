package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestWrite: the raw results, the charts and the section land where asked,
// the charts linked relative to the report, as make bench-scale lays them
// out (the report in ../docs, the charts in results/).
func TestWrite(t *testing.T) {
	dir := t.TempDir()
	bench := filepath.Join(dir, "bench")
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "docs"), 0o755))
	require.NoError(t, os.MkdirAll(bench, 0o755))
	report := filepath.Join(dir, "docs", "performance.md")
	require.NoError(t, os.WriteFile(report, []byte("# Performance\n\nkept\n"), 0o644))
	t.Chdir(bench)

	res := sample(1.05, []int64{10, 11, 12})
	require.NoError(t, write(res, "../docs/performance.md", "results", "results/scale.json"))

	b, err := os.ReadFile(report)
	require.NoError(t, err)
	doc := string(b)
	require.True(t, strings.HasPrefix(doc, "# Performance\n\nkept\n"), "the rest of the report is kept")
	require.Contains(t, doc, "<!-- begin "+Section+" -->")
	require.Contains(t, doc, "](../bench/results/"+chartMany+")")
	_, err = os.Stat(filepath.Join(bench, "results", chartMany))
	require.NoError(t, err)
	raw, err := os.ReadFile(filepath.Join(bench, "results", "scale.json"))
	require.NoError(t, err)
	var back Results
	require.NoError(t, json.Unmarshal(raw, &back))
	require.Len(t, back.Many.Rows, len(res.Many.Rows))
}
