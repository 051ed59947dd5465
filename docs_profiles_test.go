package lockbridge_test

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge/internal/protocol/legacyproto"
	"github.com/lockbridge/lockbridge/legacy"
)

// The one table of Java lock shapes and the Go options that take the same
// lock is in docs/java.md, under this heading. TestDocsLegacyProfiles holds
// it, and every legacy profile the README and docs/ name, to
// testdata/vectors/legacy.json.
const (
	shapeDoc     = "docs/java.md"
	shapeHeading = "## Which profile is your lock?"
)

// shapePhrases name, in lower case, the phrases of prose that point at one
// row of the table: a clause that names a profile and exactly one shape
// must give that row's profile. The keys are the rows' bold labels.
var shapePhrases = map[string][]string{
	"the `RedisCallback` lock":      {"`rediscallback`"},
	"`StringRedisTemplate`":         {"`stringredistemplate`"},
	"default `RedisTemplate`":       {"default `redistemplate`", "spring boot's", "`redistemplate` bean"},
	"`RedisTemplate<String, Long>`": {"`redistemplate<string, long>`"},
	"no `+ 1`":                      {"`now + lease`"},
	"jedis-lock":                    {"jedis-lock"},
	"`RedisLockRegistry`":           {"`redislockregistry`"},
	"ShedLock":                      {"shedlock"},
}

// legacyVectors is testdata/vectors/legacy.json, the parts a profile meets.
type legacyVectors struct {
	Keys []struct {
		Codec, Name, Key string
	}
	Values []struct {
		Codec, Unit string
		PlusOne     bool `json:"plus_one"`
		Now, Lease  int64
		Expiry      int64
		Value       string
	}
}

func loadLegacyVectors(t *testing.T) legacyVectors {
	t.Helper()
	b, err := os.ReadFile("testdata/vectors/legacy.json")
	require.NoError(t, err)
	var v legacyVectors
	require.NoError(t, json.Unmarshal(b, &v))
	require.NotEmpty(t, v.Keys)
	require.NotEmpty(t, v.Values)
	return v
}

// profileSpec is a legacy profile as a document names it. set says which
// fields the text fixes: all of them for a whole legacy.New(…) or
// migrate.WithLegacy(…), only the named ones for a bare option or a Java
// builder call.
type profileSpec struct {
	key     legacy.KeyCodec
	value   legacy.ValueCodec
	unit    time.Duration
	plusOne bool
	set     map[string]bool
	text    string
}

func defaultSpec(text string) profileSpec {
	return profileSpec{key: legacy.KeyRaw, value: legacy.ValueDecimal, unit: time.Millisecond, plusOne: true,
		set: map[string]bool{}, text: text}
}

func (p profileSpec) String() string {
	return fmt.Sprintf("key %s, value %s, unit %s, +1 %t", p.key, p.value, p.unit, p.plusOne)
}

func (p profileSpec) options() []legacy.Option {
	return []legacy.Option{legacy.WithKeyCodec(p.key), legacy.WithValueCodec(p.value),
		legacy.WithUnit(p.unit), legacy.WithPlusOne(p.plusOne)}
}

// goCodecs maps the legacy package's codec identifiers to the codecs; it
// must name every codec.
func goCodecs(t *testing.T) (map[string]legacy.KeyCodec, map[string]legacy.ValueCodec) {
	keys := map[string]legacy.KeyCodec{"KeyRaw": legacy.KeyRaw, "KeyJavaString": legacy.KeyJavaString}
	values := map[string]legacy.ValueCodec{"ValueDecimal": legacy.ValueDecimal, "ValueJavaString": legacy.ValueJavaString,
		"ValueJavaLong": legacy.ValueJavaLong, "ValueJSONString": legacy.ValueJSONString,
		"ValueJSONNumber": legacy.ValueJSONNumber}
	require.Len(t, values, len(legacy.ValueCodecs()), "a value codec is missing from goCodecs")
	return keys, values
}

// selector returns "pkg.Name" for a selector expression, else "".
func selector(e ast.Expr) string {
	s, ok := e.(*ast.SelectorExpr)
	if !ok {
		return ""
	}
	x, ok := s.X.(*ast.Ident)
	if !ok {
		return ""
	}
	return x.Name + "." + s.Sel.Name
}

// goProfileSpan finds a Go legacy profile in a code span or a line of Go:
// legacy.New(…), migrate.WithLegacy(…), or legacy.With… options.
var goProfileSpan = regexp.MustCompile(
	`legacy\.New\(|migrate\.WithLegacy\(|legacy\.With(KeyCodec|ValueCodec|Unit|PlusOne)\(`)

// parseGoProfile parses the Go profile in code, which holds one of
// goProfileSpan's forms. ok is false when code names none; an error when
// it names an unknown codec or cannot be read.
func parseGoProfile(t *testing.T, code string) (spec profileSpec, ok bool, err error) {
	keys, values := goCodecs(t)
	spec = defaultSpec(code)
	// Parse the smallest balanced expression from the first match, so that
	// a line of Go (an assignment, a comment after it) parses too.
	loc := goProfileSpan.FindStringIndex(code)
	if loc == nil {
		return spec, false, nil
	}
	start := loc[0]
	// Widen to an enclosing legacy.New(…) / migrate.WithLegacy(…).
	for _, w := range []string{"legacy.New(", "migrate.WithLegacy("} {
		if i := strings.LastIndex(code[:start], w); i >= 0 {
			start = i
		}
	}
	depth, end := 0, -1
	for i := start; i < len(code) && end < 0; i++ {
		switch code[i] {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				end = i + 1
			}
		}
	}
	if end < 0 {
		return spec, true, fmt.Errorf("unbalanced profile %q", code[start:])
	}
	src := code[start:end]
	if strings.Contains(src, "...") || strings.Contains(src, "…") || strings.Contains(src, "<") {
		return spec, false, nil // a placeholder: migrate.WithLegacy(<the Java profile>)
	}
	expr, err := parser.ParseExpr(src)
	if err != nil {
		return spec, true, fmt.Errorf("%q: %v", src, err)
	}
	call := expr.(*ast.CallExpr)
	whole := false
	var opts []ast.Expr
	switch selector(call.Fun) {
	case "legacy.New":
		whole, opts = true, call.Args[1:]
	case "migrate.WithLegacy":
		whole, opts = true, call.Args
	default:
		opts = []ast.Expr{call}
	}
	for _, o := range opts {
		oc, isCall := o.(*ast.CallExpr)
		if !isCall || len(oc.Args) != 1 {
			continue
		}
		arg := oc.Args[0]
		switch selector(oc.Fun) {
		case "legacy.WithKeyCodec":
			name := strings.TrimPrefix(selector(arg), "legacy.")
			k, known := keys[name]
			if !known {
				return spec, true, fmt.Errorf("%q: no key codec legacy.%s", src, name)
			}
			spec.key, spec.set["key"] = k, true
		case "legacy.WithValueCodec":
			name := strings.TrimPrefix(selector(arg), "legacy.")
			v, known := values[name]
			if !known {
				return spec, true, fmt.Errorf("%q: no value codec legacy.%s", src, name)
			}
			spec.value, spec.set["value"] = v, true
		case "legacy.WithUnit":
			switch selector(arg) {
			case "time.Second":
				spec.unit = time.Second
			case "time.Millisecond":
				spec.unit = time.Millisecond
			default:
				return spec, true, fmt.Errorf("%q: a unit the vectors do not pin", src)
			}
			spec.set["unit"] = true
		case "legacy.WithPlusOne":
			id, isIdent := arg.(*ast.Ident)
			if !isIdent || (id.Name != "true" && id.Name != "false") {
				return spec, true, fmt.Errorf("%q: WithPlusOne needs true or false", src)
			}
			spec.plusOne, spec.set["plusOne"] = id.Name == "true", true
		}
	}
	if whole {
		for _, f := range []string{"key", "value", "unit", "plusOne"} {
			spec.set[f] = true
		}
	}
	return spec, true, nil
}

// javaProfile finds lockbridge-java's profile calls in a code span.
var (
	javaProfileSpan = regexp.MustCompile(
		`\b(KeyCodec|ValueCodec)\.[A-Z][A-Z_]*\b|\.unit\(TimeUnit\.\w+\)|\.plusOne\((true|false)\)`)
	javaEnumConst = regexp.MustCompile(`(?m)^\s*([A-Z_]+)\("([a-z-]+)"\)`)
)

// javaCodecIDs maps lockbridge-java's codec enum constants to their ids,
// read from its sources.
func javaCodecIDs(t *testing.T, enum string) map[string]string {
	b, err := os.ReadFile(filepath.Join("java/src/main/java/io/lockbridge", enum+".java"))
	require.NoError(t, err)
	ids := map[string]string{}
	for _, m := range javaEnumConst.FindAllStringSubmatch(string(b), -1) {
		ids[m[1]] = m[2]
	}
	require.NotEmpty(t, ids, "no constants in %s.java", enum)
	return ids
}

func parseJavaProfile(t *testing.T, code string) (spec profileSpec, ok bool, err error) {
	spec = defaultSpec(code)
	if strings.Contains(code, "legacy.") {
		return spec, false, nil // Go: legacy.ValueCodec.Decode and the like
	}
	ms := javaProfileSpan.FindAllString(code, -1)
	if len(ms) == 0 {
		return spec, false, nil
	}
	keyIDs, valueIDs := javaCodecIDs(t, "KeyCodec"), javaCodecIDs(t, "ValueCodec")
	for _, m := range ms {
		switch {
		case strings.HasPrefix(m, "KeyCodec."):
			id, known := keyIDs[strings.TrimPrefix(m, "KeyCodec.")]
			if !known {
				return spec, true, fmt.Errorf("%q: lockbridge-java has no %s", code, m)
			}
			if spec.key, err = legacyproto.ParseKeyCodec(id); err != nil {
				return spec, true, err
			}
			spec.set["key"] = true
		case strings.HasPrefix(m, "ValueCodec."):
			id, known := valueIDs[strings.TrimPrefix(m, "ValueCodec.")]
			if !known {
				return spec, true, fmt.Errorf("%q: lockbridge-java has no %s", code, m)
			}
			if spec.value, err = legacyproto.ParseValueCodec(id); err != nil {
				return spec, true, err
			}
			spec.set["value"] = true
		case strings.HasPrefix(m, ".unit("):
			switch m {
			case ".unit(TimeUnit.SECONDS)":
				spec.unit = time.Second
			case ".unit(TimeUnit.MILLISECONDS)":
				spec.unit = time.Millisecond
			default:
				return spec, true, fmt.Errorf("%q: a unit the vectors do not pin", code)
			}
			spec.set["unit"] = true
		case strings.HasPrefix(m, ".plusOne("):
			spec.plusOne, spec.set["plusOne"] = m == ".plusOne(true)", true
		}
	}
	if strings.Contains(code, "LegacyProfile.defaults()") {
		for _, f := range []string{"key", "value", "unit", "plusOne"} {
			spec.set[f] = true
		}
	}
	return spec, true, nil
}

// checkAgainstVectors checks that the Go code with a profile writes what
// the vectors say: the key of "orders", and every value vector of the
// profile's codec, unit and +1 (at least one must exist).
func checkAgainstVectors(t *testing.T, where string, spec profileSpec, v legacyVectors) {
	t.Helper()
	p, err := legacyproto.NewProfile(spec.options()...)
	if err != nil {
		t.Errorf("%s: %s: %v", where, spec.text, err)
		return
	}
	keys := 0
	for _, k := range v.Keys {
		if k.Codec != p.KeyCodec().String() {
			continue
		}
		keys++
		got, err := p.EncodeKey(k.Name)
		if err != nil || hex.EncodeToString([]byte(got)) != k.Key {
			t.Errorf("%s: %s: key of %q is %x (%v), the vectors say %s", where, spec.text, k.Name, got, err, k.Key)
		}
	}
	if keys == 0 {
		t.Errorf("%s: %s: no key vector of codec %s", where, spec.text, p.KeyCodec())
	}
	values := 0
	for _, val := range v.Values {
		if val.Codec != p.ValueCodec().String() || val.Unit != p.UnitID() || val.PlusOne != p.PlusOne() {
			continue
		}
		values++
		now := p.TimeOf(val.Now)
		if w := p.Expiry(now, time.Duration(val.Lease)*p.Unit()); w != val.Expiry {
			t.Errorf("%s: %s: expiry of lease %d at %d is %d, the vectors say %d", where, spec.text, val.Lease, val.Now, w,
				val.Expiry)
		}
		if got := hex.EncodeToString([]byte(p.EncodeValue(val.Expiry))); got != val.Value {
			t.Errorf("%s: %s: value of %d is %s, the vectors say %s", where, spec.text, val.Expiry, got, val.Value)
		}
	}
	if values == 0 {
		t.Errorf("%s: %s: no value vector pins codec %s, unit %s, +1 %t", where, spec.text, p.ValueCodec(), p.UnitID(),
			p.PlusOne())
	}
}

// byteNotation matches a table cell's bytes: hex pairs and ASCII words, `…`
// between a prefix and a suffix.
func parseBytes(s string) (prefix, suffix []byte, elided bool) {
	parts := strings.SplitN(s, "…", 2)
	conv := func(part string) []byte {
		var out []byte
		for _, tok := range strings.Fields(part) {
			if len(tok) == 2 {
				if b, err := hex.DecodeString(tok); err == nil {
					out = append(out, b...)
					continue
				}
			}
			out = append(out, tok...)
		}
		return out
	}
	prefix = conv(parts[0])
	if len(parts) == 2 {
		return prefix, conv(parts[1]), true
	}
	return prefix, nil, false
}

// codeSpans returns the `code` spans of a line of markdown.
var codeSpan = regexp.MustCompile("`([^`]+)`")

// shapeRow is one legacy row of the table.
type shapeRow struct {
	label string
	spec  profileSpec
}

// readShapeTable parses the table of docs/java.md and checks its legacy
// rows' bytes against the vectors.
func readShapeTable(t *testing.T, v legacyVectors) map[string]shapeRow {
	t.Helper()
	b, err := os.ReadFile(shapeDoc)
	require.NoError(t, err)
	doc := string(b)
	i := strings.Index(doc, "\n"+shapeHeading+"\n")
	require.GreaterOrEqual(t, i, 0, "%s has no %q", shapeDoc, shapeHeading)
	var rows [][]string
	inTable := false
	for _, line := range strings.Split(doc[i+1:], "\n")[1:] {
		if strings.HasPrefix(line, "|") {
			inTable = true
			cells := strings.Split(strings.Trim(line, "|"), " | ")
			rows = append(rows, cells)
			continue
		}
		if inTable {
			break
		}
		if strings.HasPrefix(line, "#") {
			break
		}
	}
	require.Greater(t, len(rows), 2, "the table under %q", shapeHeading)
	require.Len(t, rows[0], 4, "the table's columns: Java code, key, value, Go options")
	label := regexp.MustCompile(`^\*\*(.+?)\*\*`)
	table := map[string]shapeRow{}
	for _, cells := range rows[2:] {
		require.Len(t, cells, 4, "row %q", cells)
		m := label.FindStringSubmatch(strings.TrimSpace(cells[0]))
		require.NotNil(t, m, "row %q: the Java code starts with its bold label", cells[0])
		l := m[1]
		_, named := shapePhrases[l]
		require.True(t, named, "row %q: shapePhrases has no entry for it", l)
		if !strings.Contains(cells[3], "legacy.") {
			continue
		}
		spec, ok, err := parseGoProfile(t, cells[3])
		require.NoError(t, err, "row %q", l)
		require.True(t, ok, "row %q: no legacy profile in %q", l, cells[3])
		require.True(t, spec.set["key"], "row %q: the options cell is a whole legacy.New(c, …)", l)
		where := shapeDoc + ": row " + l
		checkAgainstVectors(t, where, spec, v)

		p, err := legacyproto.NewProfile(spec.options()...)
		require.NoError(t, err)
		// The key cell: the key of "orders" under the row's key codec.
		keySpans := codeSpan.FindAllStringSubmatch(cells[1], -1)
		require.Len(t, keySpans, 1, "%s: one code span of key bytes", where)
		wantKey, _, _ := parseBytes(keySpans[0][1])
		gotKey, err := p.EncodeKey("orders")
		require.NoError(t, err)
		if string(wantKey) != gotKey {
			t.Errorf("%s: the key cell says %x, the options write %x", where, wantKey, gotKey)
		}
		// The value cell: the value of a 60 s lease at 1700000000000 ms,
		// which the vectors pin for every codec, unit and +1.
		valSpans := codeSpan.FindAllStringSubmatch(cells[2], -1)
		require.Len(t, valSpans, 1, "%s: one code span of value bytes", where)
		prefix, suffix, elided := parseBytes(valSpans[0][1])
		found := false
		for _, val := range v.Values {
			if val.Codec != p.ValueCodec().String() || val.Unit != p.UnitID() || val.PlusOne != p.PlusOne() ||
				val.Now != p.Time(time.UnixMilli(1700000000000)) || val.Lease != p.Units(time.Minute) {
				continue
			}
			found = true
			stored, err := hex.DecodeString(val.Value)
			require.NoError(t, err)
			ok := string(stored) == string(prefix)
			if elided {
				ok = strings.HasPrefix(string(stored), string(prefix)) && strings.HasSuffix(string(stored), string(suffix))
			}
			if !ok {
				t.Errorf("%s: the value cell says %q, the vectors store %x", where, valSpans[0][1], stored)
			}
			if m := regexp.MustCompile(`\((\d+) bytes\)`).FindStringSubmatch(cells[2]); m != nil {
				if n, _ := strconv.Atoi(m[1]); n != len(stored) {
					t.Errorf("%s: the value cell says %d bytes, the vectors store %d", where, n, len(stored))
				}
			}
		}
		if !found {
			t.Errorf("%s: no vector of a 60 s lease at 1700000000000 ms for %s", where, spec)
		}
		table[l] = shapeRow{label: l, spec: spec}
	}
	require.NotEmpty(t, table)
	return table
}

// clauses splits markdown into the clauses a profile and a shape must share
// to be held to each other: paragraphs (or code blocks, or table rows),
// then sentences and semicolon-separated parts outside code spans.
func clauses(doc string) []string {
	var out []string
	var para []string
	flush := func() {
		if len(para) == 0 {
			return
		}
		text := strings.Join(para, " ")
		para = nil
		// Split outside code spans.
		var cur strings.Builder
		inCode := false
		for i := 0; i < len(text); i++ {
			c := text[i]
			if c == '`' {
				inCode = !inCode
			}
			cur.WriteByte(c)
			if !inCode && (c == '.' || c == ';') && i+1 < len(text) && text[i+1] == ' ' {
				out = append(out, cur.String())
				cur.Reset()
			}
		}
		out = append(out, cur.String())
	}
	inFence := false
	for _, line := range strings.Split(doc, "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(trimmed, "```"):
			flush()
			inFence = !inFence
		case inFence:
			// Each line of code is its own clause, with its comment.
			out = append(out, "`"+strings.ReplaceAll(line, "`", "'")+"`")
		case trimmed == "" || strings.HasPrefix(trimmed, "#") || strings.HasPrefix(trimmed, "|"):
			flush()
			if strings.HasPrefix(trimmed, "|") {
				out = append(out, trimmed)
			}
		default:
			para = append(para, trimmed)
		}
	}
	flush()
	return out
}

// shapesIn returns the table rows a clause names.
func shapesIn(clause string) []string {
	lower := strings.ToLower(clause)
	var named []string
	for label, phrases := range shapePhrases {
		for _, ph := range phrases {
			if strings.Contains(lower, ph) {
				named = append(named, label)
				break
			}
		}
	}
	sort.Strings(named)
	return named
}

// TestDocsLegacyProfiles: the table of Java lock shapes in docs/java.md
// agrees with the golden vectors, and every legacy profile that the README
// and docs/ name (Go options, or lockbridge-java's builder) is one the
// vectors pin; where the same clause names exactly one Java shape of the
// table, it is that shape's profile.
func TestDocsLegacyProfiles(t *testing.T) {
	v := loadLegacyVectors(t)
	table := readShapeTable(t, v)
	docs, err := filepath.Glob("docs/*.md")
	require.NoError(t, err)
	docs = append([]string{"README.md"}, docs...)
	profiles := 0
	for _, doc := range docs {
		b, err := os.ReadFile(doc)
		require.NoError(t, err)
		for _, clause := range clauses(string(b)) {
			for _, span := range codeSpan.FindAllStringSubmatch(clause, -1) {
				code := span[1]
				spec, ok, err := parseGoProfile(t, code)
				if !ok && err == nil {
					spec, ok, err = parseJavaProfile(t, code)
				}
				if err != nil {
					t.Errorf("%s: %v", doc, err)
					continue
				}
				if !ok {
					continue
				}
				profiles++
				where := fmt.Sprintf("%s: %q", doc, code)
				t.Logf("%s: %s (shapes named: %v)", where, spec, shapesIn(clause))
				checkAgainstVectors(t, where, spec, v)
				shapes := shapesIn(clause)
				if len(shapes) != 1 {
					continue
				}
				row, legacyShape := table[shapes[0]]
				if !legacyShape {
					t.Errorf("%s names a legacy profile beside %s, which the table takes with modern", where, shapes[0])
					continue
				}
				for f, set := range spec.set {
					if !set {
						continue
					}
					if (f == "key" && spec.key != row.spec.key) || (f == "value" && spec.value != row.spec.value) ||
						(f == "unit" && spec.unit != row.spec.unit) || (f == "plusOne" && spec.plusOne != row.spec.plusOne) {
						t.Errorf("%s, about %s, says %s; the table (%s) says %s", where, shapes[0], spec,
							shapeDoc+"#which-profile-is-your-lock", row.spec)
						break
					}
				}
			}
		}
	}
	if profiles < len(table) {
		t.Errorf("found %d profiles in the README and docs/, fewer than the table's %d rows: is the parser blind?", profiles,
			len(table))
	}
}

// fileMarker precedes a fenced block that shows a whole file of the
// repository: <!-- file: path -->.
var fileMarker = regexp.MustCompile(`^<!-- file: (\S+) -->$`)

// TestREADMEFirstProgram: the README's first program is
// examples/quickstart/main.go byte for byte (its test there runs it against
// a real redis-server), and so is every block of README.md and docs/ marked
// <!-- file: path -->.
func TestREADMEFirstProgram(t *testing.T) {
	docs, err := filepath.Glob("docs/*.md")
	require.NoError(t, err)
	docs = append([]string{"README.md"}, docs...)
	shown := map[string]bool{}
	for _, doc := range docs {
		b, err := os.ReadFile(doc)
		require.NoError(t, err)
		lines := strings.Split(string(b), "\n")
		for i, line := range lines {
			m := fileMarker.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			if i+1 >= len(lines) || !strings.HasPrefix(lines[i+1], "```") {
				t.Errorf("%s:%d: %s is not followed by a fenced block", doc, i+1, line)
				continue
			}
			end := i + 2
			for end < len(lines) && lines[end] != "```" {
				end++
			}
			if end == len(lines) {
				t.Errorf("%s:%d: unclosed block", doc, i+2)
				continue
			}
			block := strings.Join(lines[i+2:end], "\n") + "\n"
			src, err := os.ReadFile(m[1])
			if !assert.NoError(t, err, "%s:%d shows %s", doc, i+1, m[1]) {
				continue
			}
			assert.Equal(t, string(src), block, "%s:%d: the block differs from %s: copy the file into the README", doc, i+1,
				m[1])
			shown[m[1]] = true
		}
	}
	assert.True(t, shown["examples/quickstart/main.go"],
		"README.md shows examples/quickstart/main.go as its first program")
}
