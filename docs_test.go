package lockbridge_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var updateDocs = flag.Bool("update-docs", false, "rewrite the Lua blocks of the docs from the files they name")

// docLabel names the shipped file a fenced Lua block shows: the line
// `<!-- file: internal/protocol/luafrag/args.lua -->` right before the fence.
var docLabel = regexp.MustCompile(`^<!-- file: (\S+) -->$`)

// Every Lua block the docs show is a shipped file, byte for byte: each
// ```lua block is labelled with the file it shows (the line before it, see
// docLabel), and its text equals that file's. A reader who types a
// documented script sends what lockbridge sends. After changing a script,
// rewrite the blocks with
//
//	go test -run TestDocsShowTheShippedScripts . -update-docs
func TestDocsShowTheShippedScripts(t *testing.T) {
	docs, err := filepath.Glob("docs/*.md")
	require.NoError(t, err)
	docs = append(docs, "README.md")
	blocks := 0
	for _, doc := range docs {
		b, err := os.ReadFile(doc)
		if os.IsNotExist(err) {
			continue
		}
		require.NoError(t, err)
		out, n, errs := syncLuaBlocks(string(b))
		blocks += n
		for _, e := range errs {
			t.Errorf("%s: %v", doc, e)
		}
		if *updateDocs && out != string(b) {
			require.NoError(t, os.WriteFile(doc, []byte(out), 0o644))
			t.Logf("%s: Lua blocks rewritten from their files", doc)
		}
	}
	assert.Positive(t, blocks, "docs/protocol.md shows the scripts")
}

// syncLuaBlocks returns doc with every labelled Lua block replaced by its
// file, how many blocks there are, and what is wrong: an unlabelled or
// unclosed block, a missing file, or (unless -update-docs) a block that
// differs from its file.
func syncLuaBlocks(doc string) (string, int, []error) {
	lines := strings.Split(doc, "\n")
	var (
		out  []string
		errs []error
		n    int
	)
	for i := 0; i < len(lines); i++ {
		out = append(out, lines[i])
		if strings.TrimSpace(lines[i]) != "```lua" {
			continue
		}
		n++
		end := i + 1
		for end < len(lines) && strings.TrimSpace(lines[end]) != "```" {
			end++
		}
		if end == len(lines) {
			errs = append(errs, fmt.Errorf("line %d: a ```lua block that is never closed", i+1))
			return doc, n, errs
		}
		var m []string
		if i > 0 {
			m = docLabel.FindStringSubmatch(strings.TrimSpace(lines[i-1]))
		}
		if m == nil {
			errs = append(errs, fmt.Errorf(
				"line %d: a Lua block without a `<!-- file: path -->` line before it: show a shipped file, or no Lua", i+1))
			out = append(out, lines[i+1:end+1]...)
			i = end
			continue
		}
		src, err := os.ReadFile(m[1])
		if err != nil {
			errs = append(errs, fmt.Errorf("line %d: %v", i+1, err))
			out = append(out, lines[i+1:end+1]...)
			i = end
			continue
		}
		want := strings.TrimSuffix(string(src), "\n")
		got := strings.Join(lines[i+1:end], "\n")
		if got != want && !*updateDocs {
			errs = append(errs, fmt.Errorf(
				"line %d: the block differs from %s (run go test -run TestDocsShowTheShippedScripts . -update-docs)", i+1, m[1]))
		}
		out = append(out, want, lines[end])
		i = end
	}
	return strings.Join(out, "\n"), n, errs
}

// docTestLink is a link to a test in docs/safety.md: [TestName](../path_test.go).
var docTestLink = regexp.MustCompile(`\[(Test\w+)\]\(\.\./([^)]+_test\.go)\)`)

// docJUnitLink is a link to a JUnit test of lockbridge-java in
// docs/safety.md: [faultName](../java/src/test/…/NameTest.java).
var docJUnitLink = regexp.MustCompile(`\[(fault\w+)\]\(\.\./(java/src/test/[^)]+Test\.java)\)`)

// Every claim of docs/safety.md links the test that shows it: each linked
// test must exist, in the file the link names.
func TestDocsSafetyLinks(t *testing.T) {
	b, err := os.ReadFile("docs/safety.md")
	require.NoError(t, err)
	links := docTestLink.FindAllStringSubmatch(string(b), -1)
	require.NotEmpty(t, links)
	for _, m := range links {
		src, err := os.ReadFile(m[2])
		if !assert.NoError(t, err, "docs/safety.md links %s in %s", m[1], m[2]) {
			continue
		}
		assert.Contains(t, string(src), "func "+m[1]+"(", "docs/safety.md links %s, which is not in %s", m[1], m[2])
	}
	for _, m := range docJUnitLink.FindAllStringSubmatch(string(b), -1) {
		src, err := os.ReadFile(m[2])
		if !assert.NoError(t, err, "docs/safety.md links %s in %s", m[1], m[2]) {
			continue
		}
		assert.Contains(t, string(src), " void "+m[1]+"(", "docs/safety.md links %s, which is not in %s", m[1], m[2])
	}
}
