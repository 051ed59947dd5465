package legacy_test

// Differential tests of the legacy Lua fragments before and after they
// were made faster (copies of the earlier fragments, as of commits 4f891e0
// and b757fdb^, are in testdata/before-speedup; the decoder of b757fdb^ is
// the first release's, read from testdata/v1) against the current ones,
// and of the Lua decoder against the Go decoder, on a real redis-server:
// the same arguments accepted and refused with the same messages, the same
// values decoded, the same owner-window codes.

import (
	"fmt"
	"math/rand"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/legacy"
)

func fragFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

func beforeFrag(t *testing.T, name string) string {
	return fragFile(t, "testdata/before-speedup/"+name)
}

// v1Decode is legacy_decode.lua as the first release shipped it (and as it
// stayed until the speed work): the head of the frozen version-1 acquire
// script, up to the next fragment.
func v1Decode(t *testing.T) string {
	t.Helper()
	src := fragFile(t, "../testdata/v1/legacy_acquire.lua")
	i := strings.Index(src, "\n-- legacy_expired.lua:")
	require.Positive(t, i, "testdata/v1/legacy_acquire.lua starts with legacy_decode.lua")
	return src[:i+1]
}
func currentFrag(t *testing.T, name string) string {
	return fragFile(t, "../internal/protocol/luafrag/"+name)
}

// luaBlock wraps fragments in a do-block and exports the named locals.
func luaBlock(prefix string, exports []string, srcs ...string) string {
	var b strings.Builder
	for _, e := range exports {
		fmt.Fprintf(&b, "local %s_%s\n", prefix, e)
	}
	b.WriteString("do\n")
	for _, s := range srcs {
		b.WriteString(s)
		b.WriteString("\n")
	}
	for _, e := range exports {
		fmt.Fprintf(&b, "%s_%s = %s\n", prefix, e, e)
	}
	b.WriteString("end\n")
	return b.String()
}

func intInputs(rng *rand.Rand) []string {
	in := []string{
		"", "0", "-0", "+0", "00", "01", "+1", "-1", "1", " 1", "1 ", "\t1", "1\n", "1.0", "1e3", "0x10",
		"9007199254740992", "-9007199254740992", "9007199254740993", "-9007199254740993",
		"9007199254740991", "9007199254740994", "9999999999999999", "-9999999999999999",
		"10000000000000000", "-1000000000000000", "1000000000000000", "12345678901234567",
		"-12345678901234567", "123456789012345678", "-", "--1", "-01", "1-", "١", "\x001", "1\x00",
		"8007199254740992", "9007199254740990", "-9007199254740991", "900719925474099", "-900719925474099",
	}
	alpha := "0123456789+- \t.ex\x00"
	for i := 0; i < 3000; i++ {
		n := rng.Intn(20)
		var b []byte
		for j := 0; j < n; j++ {
			if rng.Intn(4) == 0 {
				b = append(b, alpha[rng.Intn(len(alpha))])
			} else {
				b = append(b, byte('0'+rng.Intn(10)))
			}
		}
		in = append(in, string(b))
	}
	for i := 0; i < 2000; i++ {
		v := rng.Int63n(1<<54) - 1<<53
		if rng.Intn(3) == 0 {
			v = 9007199254740992 - rng.Int63n(10)
			if rng.Intn(2) == 0 {
				v = -v - rng.Int63n(3)
			}
		}
		in = append(in, strconv.FormatInt(v, 10))
	}
	return in
}

// arg_int at 4f891e0 and at b757fdb^ against the current one: the same
// values and the same errors for every input and range.
func TestArgIntOldNew(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := locktest.Ctx(t)
	body := `
local ranges = {{-9007199254740992, 9007199254740992}, {1, 9007199254740992}, {0, 9007199254740992}, {0, 10}, {-5, 5}, {1700000000000, 1800000000000}}
local function show(ok, v)
  if ok then return 'ok ' .. string.format('%.0f', v) .. ' ' .. tostring(1/v) end
  if type(v) == 'table' then return 'err ' .. tostring(v.err) end
  return 'lua ' .. tostring(v)
end
local out = {}
for i = 1, #ARGV do
  for _, r in ipairs(ranges) do
    local a = show(pcall(new_arg_int, i, r[1], r[2]))
    local b = show(pcall(old_arg_int, i, r[1], r[2]))
    local c = show(pcall(orig_arg_int, i, r[1], r[2]))
    if a ~= b or a ~= c then
      table.insert(out, string.format('%q', ARGV[i]) .. ' [' .. string.format('%.0f', r[1]) .. ',' .. string.format('%.0f', r[2]) .. ']: new ' .. a .. ' | 4f891e0 ' .. b .. ' | b757fdb^ ' .. c)
    end
  end
end
table.insert(out, 'n=' .. #ARGV)
return out
`
	src := luaBlock("new", []string{"arg_int"}, currentFrag(t, "args.lua")) +
		luaBlock("old", []string{"arg_int"}, beforeFrag(t, "args.lua")) +
		luaBlock("orig", []string{"arg_int"}, beforeFrag(t, "args_orig.lua")) + body
	script := driver.NewScript("test/argint.lua", src)
	rng := rand.New(rand.NewSource(19))
	in := intInputs(rng)
	total := 0
	for start := 0; start < len(in); start += 500 {
		end := min(start+500, len(in))
		args := make([]any, 0, end-start)
		for _, s := range in[start:end] {
			args = append(args, s)
		}
		r, err := tg.Client.Eval(ctx, script, []string{"unused"}, args...)
		require.NoError(t, err)
		out := r.([]any)
		last := out[len(out)-1].(string)
		n, _ := strconv.Atoi(strings.TrimPrefix(last, "n="))
		total += n
		for _, d := range out[:len(out)-1] {
			t.Errorf("arg_int differs: %s", d)
		}
	}
	assert.Equal(t, len(in), total)
}

// fuzzValues is a large table of byte strings for the decoders: mutations of
// each codec's encodings and random decimal-like strings.
func fuzzValues(rng *rand.Rand, n int) []string {
	in := decodeInputs()
	alpha := "0123456789+- \t\n\".x\x00\xac\xed"
	codecs := legacy.ValueCodecs()
	for len(in) < n {
		switch rng.Intn(4) {
		case 0:
			k := rng.Intn(22)
			var b []byte
			for j := 0; j < k; j++ {
				if rng.Intn(5) == 0 {
					b = append(b, alpha[rng.Intn(len(alpha))])
				} else {
					b = append(b, byte('0'+rng.Intn(10)))
				}
			}
			in = append(in, string(b))
		case 1:
			// a decimal with sign and leading zeros, up to 21 digits
			var b []byte
			switch rng.Intn(3) {
			case 0:
				b = append(b, '-')
			case 1:
				b = append(b, '+')
			}
			for z := rng.Intn(4); z > 0; z-- {
				b = append(b, '0')
			}
			k := 1 + rng.Intn(20)
			for j := 0; j < k; j++ {
				b = append(b, byte('0'+rng.Intn(10)))
			}
			if rng.Intn(3) == 0 {
				b = append([]byte(strconv.FormatInt(rng.Int63(), 10)), b[:0]...)
				if rng.Intn(2) == 0 {
					b = append([]byte{'-'}, b...)
				}
			}
			s := string(b)
			in = append(in, s, `"`+s+`"`)
			if len(s) < 256 {
				in = append(in, "\xac\xed\x00\x05\x74\x00"+string([]byte{byte(len(s))})+s)
			}
		default:
			c := codecs[rng.Intn(len(codecs))]
			v := rng.Int63()
			if rng.Intn(2) == 0 {
				v = -v
			}
			if rng.Intn(3) == 0 {
				v = 1700000000000 + rng.Int63n(1e12)
			}
			e := []byte(c.Encode(v))
			switch rng.Intn(5) {
			case 0:
				e[rng.Intn(len(e))] ^= byte(1 << rng.Intn(8))
			case 1:
				e = e[:rng.Intn(len(e)+1)]
			case 2:
				p := rng.Intn(len(e) + 1)
				e = append(e[:p:p], append([]byte{alpha[rng.Intn(len(alpha))]}, e[p:]...)...)
			}
			in = append(in, string(e))
		}
	}
	return in
}

// The current Lua decoder against the one at 4f891e0 and b757fdb^, and
// against the Go decoder, on a large table of byte strings.
func TestDecodersFuzz(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := locktest.Ctx(t)
	body := `
local codecs = {'decimal', 'jdk-string', 'jdk-long', 'json-string', 'json-number'}
local function show(ok, v)
  if not ok then return 'lua ' .. tostring(v) end
  if v == nil then return 'nil' end
  return string.format('%.0f', v) .. ' ' .. tostring(1/v)
end
local out = {}
for i = 1, #ARGV do
  local row = {}
  for j, c in ipairs(codecs) do
    local a = show(pcall(new_legacy_decode, ARGV[i], c))
    local b = show(pcall(old_legacy_decode, ARGV[i], c))
    local d = show(pcall(orig_legacy_decode, ARGV[i], c))
    local differ = a ~= b or a ~= d
    if c == 'jdk-long' and differ then
      -- jdk-long beyond 2^53 now rounds once, to the nearest double (the
      -- Go comparison below checks that); it must accept and refuse alike.
      differ = (a == 'nil') ~= (b == 'nil') or (a == 'nil') ~= (d == 'nil')
    end
    if differ then
      return {err = 'old/new differ on ' .. string.format('%q', ARGV[i]) .. ' ' .. c .. ': ' .. a .. ' | ' .. b .. ' | ' .. d}
    end
    if a == 'nil' then row[j] = false else row[j] = a end
  end
  out[i] = row
end
return out
`
	src := luaBlock("new", []string{"legacy_decode"}, currentFrag(t, "legacy_decode.lua")) +
		luaBlock("old", []string{"legacy_decode"}, beforeFrag(t, "legacy_decode.lua")) +
		luaBlock("orig", []string{"legacy_decode"}, v1Decode(t)) + body
	script := driver.NewScript("test/decode.lua", src)
	rng := rand.New(rand.NewSource(1919))
	in := fuzzValues(rng, 60000)
	codecs := legacy.ValueCodecs()
	require.Equal(t, []string{"decimal", "jdk-string", "jdk-long", "json-string", "json-number"},
		[]string{codecs[0].String(), codecs[1].String(), codecs[2].String(), codecs[3].String(), codecs[4].String()})
	decoded, fails := 0, 0
	for start := 0; start < len(in) && fails < 30; start += 1000 {
		end := min(start+1000, len(in))
		args := make([]any, 0, end-start)
		for _, s := range in[start:end] {
			args = append(args, s)
		}
		r, err := tg.Client.Eval(ctx, script, []string{"unused"}, args...)
		require.NoError(t, err)
		rows := r.([]any)
		for k, s := range in[start:end] {
			row := rows[k].([]any)
			for j, c := range codecs {
				v, gerr := c.Decode(s)
				lua, _ := row[j].(string)
				if gerr != nil {
					if row[j] != nil {
						fails++
						t.Errorf("%v %q: Go refuses (%v), Lua decodes %s", c, s, gerr, lua)
					}
					continue
				}
				decoded++
				if row[j] == nil {
					fails++
					t.Errorf("%v %q: Go decodes %d, Lua refuses", c, s, v)
					continue
				}
				num, inv, _ := strings.Cut(lua, " ")
				if v == 0 && inv != "inf" {
					fails++
					t.Errorf("%v %q: negative zero in Lua: %s", c, s, lua)
				}
				want := strconv.FormatFloat(float64(v), 'f', 0, 64)
				if num != want {
					fails++
					t.Errorf("%v %q: Go %d (nearest double %s), Lua %s", c, s, v, want, num)
				}
			}
		}
	}
	assert.Greater(t, decoded, 5000)
	t.Logf("decoded %d", decoded)
}

// legacy_owner and legacy_owner_args at 4f891e0 against the current ones,
// on a large table of stored values and owner arguments.
func TestOwnerOldNew(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := locktest.Ctx(t)
	body := `
local function show(ok, v)
  if ok then return 'ok ' .. tostring(v) end
  if type(v) == 'table' then return 'err ' .. tostring(v.err) end
  return 'lua ' .. tostring(v)
end
local out = {}
for base = 0, #ARGV - 7, 7 do
  local stored = ARGV[base + 1]
  if stored == '' then stored = false end
  local a = show(pcall(function()
    return new_legacy_owner(stored, new_legacy_owner_args(base + 2))
  end))
  local b = show(pcall(function()
    return old_legacy_owner(stored, old_legacy_owner_args(base + 2))
  end))
  if a ~= b then
    table.insert(out, string.format('%q', table.concat({ARGV[base+1], ARGV[base+2], ARGV[base+3], ARGV[base+4], ARGV[base+5], ARGV[base+6], ARGV[base+7]}, '|')) .. ': new ' .. a .. ' | old ' .. b)
  end
end
return out
`
	exports := []string{"legacy_owner", "legacy_owner_args"}
	src := luaBlock("new", exports, currentFrag(t, "args.lua"), currentFrag(t, "legacy_decode.lua"), currentFrag(t,
		"legacy_args.lua"), currentFrag(t, "legacy_now.lua"), currentFrag(t, "legacy_owner.lua")) +
		luaBlock("old", exports, beforeFrag(t, "args.lua"), beforeFrag(t, "legacy_decode.lua"), beforeFrag(t,
			"legacy_args.lua"), beforeFrag(t, "legacy_now.lua"), beforeFrag(t, "legacy_owner.lua")) + body
	script := driver.NewScript("test/owner.lua", src)
	rng := rand.New(rand.NewSource(2019))
	codecs := legacy.ValueCodecs()
	srv := timeNowMs()
	pick := func(xs ...int64) int64 { return xs[rng.Intn(len(xs))] }
	var cases [][]string
	for len(cases) < 40000 {
		unit := "ms"
		base := srv
		if rng.Intn(4) == 0 {
			unit = "s"
			base = srv / 1000
		}
		lease := pick(1, 2, 3, 7, 1000, 60000, 30, 1<<53)
		w := pick(base+60000, base-1000, base-120000, base+1, base, 0, -5, 1, 1<<53, -(1 << 53), base+lease, base-lease,
			rng.Int63n(1<<53))
		now := pick(w-1, w, w+1, base, base-1, w-lease, w+lease)
		margin := pick(0, 1, 2000, 1<<53, 120000)
		c := codecs[rng.Intn(len(codecs))]
		d := strconv.FormatInt(w, 10)
		var stored string
		switch rng.Intn(12) {
		case 0:
			stored = d
		case 1:
			stored = "+" + d
		case 2:
			stored = "0" + d
		case 3:
			stored = "-" + d
		case 4:
			stored = " " + d
		case 5:
			stored = d + " "
		case 6:
			stored = codecs[rng.Intn(len(codecs))].Encode(w + rng.Int63n(lease+2) - lease/2 - 1)
		case 7:
			stored = strconv.FormatInt(w+pick(lease/2, lease/2+1, -lease/2, -lease/2-1, lease, 1, -1), 10)
		case 8:
			stored = ""
		case 9:
			stored = c.Encode(w)
		case 10:
			stored = "-0"
			if rng.Intn(2) == 0 {
				stored = "00"
			}
		default:
			stored = fuzzValues(rng, 1)[rng.Intn(len(decodeInputs()))]
		}
		ws, ls, ns, ms := d, strconv.FormatInt(lease, 10), strconv.FormatInt(now, 10), strconv.FormatInt(margin, 10)
		// now and then a bad argument
		switch rng.Intn(20) {
		case 0:
			ws = pick2(rng, "+"+d, "0"+d, d+" ", "-0", "", "9007199254740993")
		case 1:
			ls = pick2(rng, "0", "-1", "+5", "9007199254740993", "")
		case 2:
			ns = pick2(rng, "+"+ns, "-0", "1.5")
		case 3:
			ms = pick2(rng, "-1", "+0", "00")
		}
		cases = append(cases, []string{stored, c.String(), unit, ws, ls, ns, ms})
	}
	diffs := 0
	for start := 0; start < len(cases); start += 500 {
		end := min(start+500, len(cases))
		var args []any
		for _, cs := range cases[start:end] {
			for _, a := range cs {
				args = append(args, a)
			}
		}
		r, err := tg.Client.Eval(ctx, script, []string{"unused"}, args...)
		require.NoError(t, err)
		for _, d := range r.([]any) {
			diffs++
			if diffs < 30 {
				t.Errorf("legacy_owner differs: %s", d)
			}
		}
	}
	assert.Zero(t, diffs)
}

func pick2(rng *rand.Rand, xs ...string) string { return xs[rng.Intn(len(xs))] }

func timeNowMs() int64 { return time.Now().UnixMilli() }
