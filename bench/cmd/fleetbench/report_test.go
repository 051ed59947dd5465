package main

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge/bench/internal/docsection"
)

// TestDocCarriesAnalysis: the fleet section of docs/performance.md ends
// with analysis.md as section writes it, so prose edited in one place and
// not the other (the section is regenerated only by a run of several
// minutes) shows here.
func TestDocCarriesAnalysis(t *testing.T) {
	b, err := os.ReadFile("../../../docs/performance.md")
	require.NoError(t, err)
	secs, err := docsection.All(string(b))
	require.NoError(t, err)
	var text string
	for _, s := range secs {
		if s.Name == "fleet" {
			text = s.Text
		}
	}
	require.NotEmpty(t, text, "docs/performance.md has no fleet section")
	body := strings.TrimSuffix(text, "<!-- end fleet -->")
	require.True(t, strings.HasSuffix(body, strings.TrimRight(analysis, "\n")+"\n"),
		"the fleet section of docs/performance.md does not end with bench/cmd/fleetbench/analysis.md: edit "+
			"analysis.md and copy it into the section (or run make bench-fleet)")
}
