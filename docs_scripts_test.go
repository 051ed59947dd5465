package lockbridge_test

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The script table of docs/protocol.md (between the scripts-table markers)
// is generated from testdata/vectors/scripts.json, which the interop tests
// keep equal to the code (go test ./interop -run TestVectors
// -update-vectors). Rewrite the table with
//
//	go test -run TestDocsScriptTable . -update-docs
func TestDocsScriptTable(t *testing.T) {
	const (
		doc   = "docs/protocol.md"
		begin = "<!-- scripts-table:begin -->"
		end   = "<!-- scripts-table:end -->"
	)
	b, err := os.ReadFile("testdata/vectors/scripts.json")
	require.NoError(t, err)
	var v struct {
		Scripts []struct {
			Name      string   `json:"name"`
			Fragments []string `json:"fragments"`
			Body      string   `json:"body"`
			SHA1      string   `json:"sha1"`
			Bytes     int      `json:"bytes"`
		} `json:"scripts"`
	}
	require.NoError(t, json.Unmarshal(b, &v))
	require.NotEmpty(t, v.Scripts)
	var tb strings.Builder
	tb.WriteString("| script | body file | fragments, in order (`internal/protocol/luafrag/`) | bytes | SHA1 " +
		"|\n|---|---|---|---|---|\n")
	for _, s := range v.Scripts {
		frags := make([]string, len(s.Fragments))
		for i, f := range s.Fragments {
			frags[i] = "`" + strings.TrimPrefix(f, "internal/protocol/luafrag/") + "`"
		}
		fmt.Fprintf(&tb, "| `%s` | `%s` | %s | %d | `%s` |\n", s.Name, s.Body, strings.Join(frags, ", "), s.Bytes, s.SHA1)
	}
	want := begin + "\n" + tb.String() + end

	d, err := os.ReadFile(doc)
	require.NoError(t, err)
	text := string(d)
	i, j := strings.Index(text, begin), strings.Index(text, end)
	require.True(t, i >= 0 && j > i, "%s has the scripts-table markers", doc)
	got := text[i : j+len(end)]
	if *updateDocs {
		if got != want {
			require.NoError(t, os.WriteFile(doc, []byte(text[:i]+want+text[j+len(end):]), 0o644))
			t.Logf("%s: script table rewritten", doc)
		}
		return
	}
	assert.Equal(t, want, got,
		"the script table differs from testdata/vectors/scripts.json (run go test -run TestDocsScriptTable . -update-docs)")
}
