package interop

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge/internal/protocol/legacyproto"
	"github.com/lockbridge/lockbridge/legacy"
	"github.com/lockbridge/lockbridge/migrate"
	"github.com/lockbridge/lockbridge/modern"
)

var updateVectors = flag.Bool("update-vectors", false, "rewrite testdata/vectors from the Go code")

// vectorsDir is the golden vectors' folder, from this package's directory.
const vectorsDir = "../testdata/vectors"

// legacyVectors is testdata/vectors/legacy.json: the legacy profile's
// encodings, for any implementation to check itself against. Byte strings
// are lower-case hex.
type legacyVectors struct {
	About  string        `json:"about"`
	Keys   []keyVector   `json:"keys"`
	Values []valueVector `json:"values"`
	Decode []decodeCase  `json:"decode"`
}

type keyVector struct {
	Codec string `json:"codec"` // "raw" or "jdk-string"
	Name  string `json:"name"`  // the lock name (a Java String)
	Key   string `json:"key"`   // hex of the Redis key
}

type valueVector struct {
	Codec   string `json:"codec"`    // decimal, jdk-string, jdk-long, json-string, json-number
	Unit    string `json:"unit"`     // "ms" or "s"
	PlusOne bool   `json:"plus_one"` // expiry = now + lease (+ 1)
	Now     int64  `json:"now"`      // the writer's clock, in the unit
	Lease   int64  `json:"lease"`    // in the unit
	Expiry  int64  `json:"expiry"`
	Value   string `json:"value"` // hex of the stored value
}

type decodeCase struct {
	Codec   string `json:"codec"`
	Stored  string `json:"stored"`           // hex of the stored bytes
	Expiry  *int64 `json:"expiry,omitempty"` // the decoded expiry, or
	Foreign bool   `json:"foreign,omitempty"`
}

// scriptVectors is testdata/vectors/scripts.json: every shipped script,
// how it is assembled, and the SHA1 that EVALSHA names it by.
type scriptVectors struct {
	About   string         `json:"about"`
	Scripts []scriptVector `json:"scripts"`
}

type scriptVector struct {
	Name      string   `json:"name"`      // the script's protocol name, e.g. "legacy/scripts/acquire.lua"
	Fragments []string `json:"fragments"` // repository paths, in order
	Body      string   `json:"body"`      // repository path
	SHA1      string   `json:"sha1"`      // of the assembled source
	Bytes     int      `json:"bytes"`     // its length
}

const legacyAbout = "Golden vectors of lockbridge's legacy lock (docs/protocol.md, section Legacy): " +
	"keys: lock name -> Redis key under each key codec; values: (now, lease, unit, +1) -> expiry -> stored bytes " +
	"under each value codec; decode: stored bytes -> expiry, or foreign (never expired, never taken over). " +
	"Byte strings are lower-case hex. Generated from the Go code (go test ./interop -run TestVectors -update-vectors); " +
	"the Go and the Java tests (interop/java) check against it."

const scriptsAbout = "Every Lua script lockbridge sends: its source is the fragments' files, each followed by one " +
	"newline (0x0a), then the body file, byte for byte; sha1 is the lower-case hex SHA1 of that source, as EVALSHA " +
	"names it. " +
	"Paths are relative to the repository root. Generated from the Go code (go test ./interop -run TestVectors " +
	"-update-vectors)."

// vectorNames are the lock names of the key vectors: ASCII, a hash tag,
// non-ASCII (2-, 3- and 4-byte UTF-8: modified UTF-8 differs for NUL and
// supplementary characters), and the longest short Java string edge.
var vectorNames = []string{
	"orders", "lock:order", "{tenant-1}:orders", "é", "订单", "😀", "a\x00b", "x y",
}

func buildLegacyVectors(t *testing.T) legacyVectors {
	v := legacyVectors{About: legacyAbout}
	for _, kc := range []legacy.KeyCodec{legacy.KeyRaw, legacy.KeyJavaString} {
		for _, n := range vectorNames {
			k, err := kc.Encode(n)
			require.NoError(t, err)
			v.Keys = append(v.Keys, keyVector{Codec: kc.String(), Name: n, Key: hex.EncodeToString([]byte(k))})
		}
	}
	type clock struct{ now, lease int64 }
	clocks := map[string][]clock{
		"ms": {{1700000000000, 60000}, {1795488563931, 1000}, {0, 1}},
		"s":  {{1700000000, 60}, {1, 1}},
	}
	for _, vc := range legacy.ValueCodecs() {
		for _, unit := range []string{"ms", "s"} {
			for _, plus := range []bool{true, false} {
				for _, c := range clocks[unit] {
					u := time.Millisecond
					if unit == "s" {
						u = time.Second
					}
					p, err := legacyproto.NewProfile(legacy.WithValueCodec(vc), legacy.WithUnit(u), legacy.WithPlusOne(plus))
					require.NoError(t, err)
					now := p.TimeOf(c.now)
					exp := p.Expiry(now, time.Duration(c.lease)*u)
					v.Values = append(v.Values, valueVector{Codec: vc.String(), Unit: unit, PlusOne: plus, Now: c.now, Lease: c.lease,
						Expiry: exp, Value: hex.EncodeToString([]byte(vc.Encode(exp)))})
				}
			}
		}
	}
	// Stored bytes to decode: each codec's own encodings (also of negative
	// and extreme expiries), the other codecs' encodings, and what other
	// writers leave (floats, spaces, signs, JSON quotes, 20 digits, "").
	stored := []string{
		"", "0", "-1", "+1700000000001", "1700000000001", "01700000000001", "9223372036854775807", "9223372036854775808",
		"-9223372036854775808", "12345678901234567890", "1.7e12", "1700000000001.0", " 1700000000001", "1700000000001 ",
		`"1700000000001"`, `""`, "abc", "uuid:1700000000001", "\xd9\xa1\xd9\xa2", "1700000061",
	}
	for _, vc := range legacy.ValueCodecs() {
		for _, x := range []int64{1700000000001, 0, -1, 9223372036854775807} {
			stored = append(stored, vc.Encode(x))
		}
	}
	stored = append(stored, "\xac\xed\x00\x05\x74\x00\x0e1700000000001", "\xac\xed\x00\x05\x74\x00\x0d170000000000x")
	seen := map[string]bool{}
	for _, vc := range legacy.ValueCodecs() {
		for _, s := range stored {
			id := vc.String() + "\x00" + s
			if seen[id] {
				continue
			}
			seen[id] = true
			d := decodeCase{Codec: vc.String(), Stored: hex.EncodeToString([]byte(s))}
			if x, err := vc.Decode(s); err == nil {
				d.Expiry = &x
			} else {
				var fe *legacy.ForeignValueError
				require.ErrorAs(t, err, &fe)
				d.Foreign = true
			}
			v.Decode = append(v.Decode, d)
		}
	}
	return v
}

// shippedScripts reads every luafrag.Script call of the lock packages from
// their source: the script's name, the fragments (constants resolved) and
// the embedded body file, and assembles it as luafrag.Script does.
func shippedScripts(t *testing.T) []scriptVector {
	var out []scriptVector
	for _, dir := range []string{"legacy", "migrate", "internal/protocol/modernproto"} {
		fset := token.NewFileSet()
		pkgs, err := parser.ParseDir(fset, filepath.Join("..", dir), func(fi os.FileInfo) bool {
			return !strings.HasSuffix(fi.Name(), "_test.go")
		}, parser.ParseComments)
		require.NoError(t, err)
		for _, pkg := range pkgs {
			consts := map[string]string{}
			embeds := map[string]string{}
			var calls []*ast.CallExpr
			for _, f := range pkg.Files {
				for _, d := range f.Decls {
					gd, ok := d.(*ast.GenDecl)
					if !ok {
						continue
					}
					for _, s := range gd.Specs {
						vs, ok := s.(*ast.ValueSpec)
						if !ok {
							continue
						}
						if vs.Doc != nil {
							for _, c := range vs.Doc.List {
								if rest, ok := strings.CutPrefix(c.Text, "//go:embed "); ok {
									embeds[vs.Names[0].Name] = strings.TrimSpace(rest)
								}
							}
						}
						for i, val := range vs.Values {
							if lit, ok := val.(*ast.BasicLit); ok && lit.Kind == token.STRING && gd.Tok == token.CONST {
								s, err := strconv.Unquote(lit.Value)
								require.NoError(t, err)
								consts[vs.Names[i].Name] = s
							}
						}
					}
				}
				ast.Inspect(f, func(n ast.Node) bool {
					if call, ok := n.(*ast.CallExpr); ok {
						if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Script" {
							if x, ok := sel.X.(*ast.Ident); ok && x.Name == "luafrag" {
								calls = append(calls, call)
							}
						}
					}
					return true
				})
			}
			str := func(e ast.Expr) string {
				switch e := e.(type) {
				case *ast.BasicLit:
					s, err := strconv.Unquote(e.Value)
					require.NoError(t, err)
					return s
				case *ast.Ident:
					s, ok := consts[e.Name]
					require.True(t, ok, "%s: constant %s", dir, e.Name)
					return s
				}
				t.Fatalf("%s: luafrag.Script argument %T", dir, e)
				return ""
			}
			for _, call := range calls {
				body, ok := embeds[call.Args[1].(*ast.Ident).Name]
				require.True(t, ok, "%s: the body of %s is an embedded file", dir, str(call.Args[0]))
				sv := scriptVector{Name: str(call.Args[0]), Body: path.Join(dir, body)}
				var src strings.Builder
				for _, a := range call.Args[2:] {
					f := path.Join("internal/protocol/luafrag", str(a))
					sv.Fragments = append(sv.Fragments, f)
					b, err := os.ReadFile(filepath.Join("..", f))
					require.NoError(t, err)
					src.Write(b)
					src.WriteByte('\n')
				}
				b, err := os.ReadFile(filepath.Join("..", sv.Body))
				require.NoError(t, err)
				src.Write(b)
				sum := sha1.Sum([]byte(src.String()))
				sv.SHA1, sv.Bytes = hex.EncodeToString(sum[:]), src.Len()
				out = append(out, sv)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// checkVectors compares file with want (JSON), or rewrites it under
// -update-vectors.
func checkVectors(t *testing.T, file string, want any) {
	t.Helper()
	b, err := json.MarshalIndent(want, "", "  ")
	require.NoError(t, err)
	b = append(b, '\n')
	p := filepath.Join(vectorsDir, file)
	if *updateVectors {
		require.NoError(t, os.WriteFile(p, b, 0o644))
		t.Logf("%s rewritten", p)
		return
	}
	got, err := os.ReadFile(p)
	require.NoError(t, err, "run go test ./interop -run TestVectors -update-vectors")
	assert.Equal(t, string(b), string(got),
		"%s differs from what the Go code produces (if the change is meant, run go test ./interop -run TestVectors "+
			"-update-vectors)", p)
}

// TestVectorsLegacy: testdata/vectors/legacy.json is what the legacy
// codecs produce. The Java tests (interop/java) check the same file
// against Spring's and the JDK's own serializers.
func TestVectorsLegacy(t *testing.T) {
	checkVectors(t, "legacy.json", buildLegacyVectors(t))
}

// TestVectorsScripts: testdata/vectors/scripts.json lists every script as
// the packages assemble it, with its SHA1; and the lockers really send
// those scripts: after each lock script ran on a fresh redis-server, SCRIPT
// EXISTS knows its SHA1.
func TestVectorsScripts(t *testing.T) {
	scripts := shippedScripts(t)
	require.NotEmpty(t, scripts)
	checkVectors(t, "scripts.json", scriptVectors{About: scriptsAbout, Scripts: scripts})

	e := newEnv(t)
	ctx := context.Background()
	sha := map[string]string{}
	for _, s := range scripts {
		sha[s.Name] = s.SHA1
	}
	exercise := func(names []string, do func()) {
		t.Helper()
		require.NoError(t, e.raw.ScriptFlush(ctx).Err())
		do()
		for _, n := range names {
			h, ok := sha[n]
			require.True(t, ok, "scripts.json lists %s", n)
			ex, err := e.raw.ScriptExists(ctx, h).Result()
			require.NoError(t, err)
			assert.Equal(t, []bool{true}, ex, "%s ran with the SHA1 scripts.json gives (%s)", n, h)
		}
	}
	exercise([]string{"legacy/scripts/acquire.lua", "legacy/scripts/refresh.lua", "legacy/scripts/release.lua"}, func() {
		// A taken key: a free one takes SETNX alone.
		_, err := e.lock.Do(ctx, "SET", "v-legacy", "1")
		require.NoError(t, err)
		l, err := legacy.New(e.lock).TryLock(ctx, "v-legacy", time.Second)
		require.NoError(t, err)
		require.NoError(t, l.Refresh(ctx, time.Second))
		require.NoError(t, l.Unlock(ctx))
	})
	exercise([]string{"modern/acquire.lua", "modern/refresh.lua", "modern/ttl.lua", "modern/release.lua"}, func() {
		// With fencing: without it the acquire is a plain SET NX PX.
		l, err := modern.New(e.lock, modern.WithFencing()).TryLock(ctx, "v-modern", time.Second)
		require.NoError(t, err)
		ml := l.(*modern.Lock)
		require.NoError(t, ml.Refresh(ctx, time.Second))
		_, err = ml.TTL(ctx)
		require.NoError(t, err)
		require.NoError(t, ml.Unlock(ctx))
	})
	for _, p := range []migrate.Phase{migrate.PhaseDualWrite, migrate.PhaseDualRead} {
		exercise([]string{"migrate/scripts/acquire.lua", "migrate/scripts/refresh.lua", "migrate/scripts/release.lua"},
			func() {
				l, err := migrate.New(e.lock, migrate.WithPhase(p)).TryLock(ctx, fmt.Sprintf("v-migrate-%v", p), time.Second)
				require.NoError(t, err)
				require.NoError(t, l.(interface {
					Refresh(context.Context, time.Duration) error
				}).Refresh(ctx, time.Second))
				require.NoError(t, l.Unlock(ctx))
			})
	}
}
