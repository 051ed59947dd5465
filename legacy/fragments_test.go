package legacy_test

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/internal/protocol/luafrag"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/legacy"
)

func testScript(t *testing.T, file string, fragments ...string) *driver.Script {
	t.Helper()
	src, err := os.ReadFile("testdata/" + file)
	require.NoError(t, err)
	return luafrag.Script("legacy/testdata/"+file, string(src), fragments...)
}

// decodeInputs is the table the Lua and Go decoders must agree on: every
// decimal edge that Long.parseLong and strict decoding care about, each
// codec's encodings of edge values, and malformed variants of them.
func decodeInputs() []string {
	decimals := []string{
		"0", "1", "+1", "-1", "-0", "+0", "1700000000001", "1700000061", "0001700000000001",
		"9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
		"9999999999999999999", "1000000000000000000", "0000000000000000001", "00000000000000000001",
		"99999999999999999999", "-9223372036854775807", "9007199254740993",
		"", "+", "-", "++1", "+-1", "-+1", " 1", "1 ", "1\n", "\n1", "\t1", "1.0", "1.", ".1", "1e3", "1E3",
		"0x10", "1_000", "١٢٣", "１２", "abc", "1a", "a1", "3f2504e0-4f89-11d3-9a0c-0305e82c3301:1700000000001",
		"1700000000001-1234", "\x00", "1\x00", "\x001", "1350000060.0", "1390000060.123456", "NaN", "Infinity",
		`["java.lang.Long",1700000000001]`, "null", "true",
	}
	in := append([]string{}, decimals...)
	for _, d := range decimals {
		in = append(in, `"`+d+`"`)
		if len(d) < 256 {
			in = append(in, "\xac\xed\x00\x05\x74\x00"+string([]byte{byte(len(d))})+d)
		}
	}
	for _, c := range legacy.ValueCodecs() {
		for _, v := range []int64{0, 1, -1, 255, -256, 1700000000001, math.MaxInt64, math.MinInt64, 1<<53 + 1, -(1 << 53)} {
			e := c.Encode(v)
			in = append(in, e, e[:len(e)-1], e+"0", "x"+e)
			if len(e) > 10 {
				b := []byte(e)
				b[10] ^= 0x01 // a changed class name or digit
				in = append(in, string(b))
			}
		}
	}
	// A JDK String whose length byte lies, a long-form string, an Integer.
	in = append(in, "\xac\xed\x00\x05\x74\x00\x05"+"12", "\xac\xed\x00\x05\x74\x00\x01"+"12",
		"\xac\xed\x00\x05\x7c\x00\x00\x00\x00\x00\x00\x00\x02"+"12",
		"\xac\xed\x00\x05sr\x00\x11java.lang.Integer\x12\xe2\xa0\xa4\xf7\x81\x878\x02\x00\x01I\x00\x05valuexr\x00\x10java.lang.Number\x86\xac\x95\x1d\x0b\x94\xe0\x8b\x02\x00\x00xp\x65\x53\xf1\x00",
		`""`, `"`, `"1`, `1"`, `"+1"`, `" 1"`)
	return in
}

// The Lua decoder (fragment legacy_decode, run inside Redis) and the Go
// decoder (ValueCodec.Decode) accept and refuse exactly the same byte
// strings, and agree on the value.
func TestDecodersAgree(t *testing.T) {
	t.Parallel()
	script := testScript(t, "decode.lua", "legacy_decode.lua")
	codecs := legacy.ValueCodecs()
	tg := locktest.Single(t)[0]
	ctx := locktest.Ctx(t)
	decoded := 0
	for _, in := range decodeInputs() {
		args := []any{in}
		for _, c := range codecs {
			args = append(args, c.String())
		}
		r, err := tg.Client.Eval(ctx, script, []string{"unused"}, args...)
		require.NoError(t, err)
		got := r.([]any)
		require.Len(t, got, len(codecs))
		for i, c := range codecs {
			v, gerr := c.Decode(in)
			if gerr != nil {
				assert.Nil(t, got[i], "%v %q: Go refuses, Lua decodes", c, in)
				assert.ErrorAs(t, gerr, new(*legacy.ForeignValueError))
				continue
			}
			decoded++
			require.NotNil(t, got[i], "%v %q: Go decodes %d, Lua refuses", c, in, v)
			lua := got[i].(string)
			if v >= -(1<<53) && v <= 1<<53 {
				assert.Equal(t, strconv.FormatInt(v, 10), lua, "%v %q", c, in)
				continue
			}
			// Beyond 2^53 Lua holds the nearest double or close to it.
			f, err := strconv.ParseFloat(lua, 64)
			require.NoError(t, err)
			assert.InEpsilon(t, float64(v), f, 1e-15, "%v %q: %s", c, in, lua)
		}
	}
	assert.Greater(t, decoded, 50, "the table must exercise accepted values too")

	_, err := tg.Client.Eval(ctx, script, []string{"unused"}, "1", "xml")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "legacy: unknown value codec xml")
}

// The owner-window, state and server-clock fragments that release and
// refresh are built on (and that migrate reuses), on their own.
func TestOwnerFragments(t *testing.T) {
	t.Parallel()
	script := testScript(t, "owner.lua", "args.lua", "legacy_decode.lua", "legacy_args.lua", "legacy_now.lua",
		"legacy_expired.lua", "legacy_owner.lua")
	tg := locktest.Single(t)[1]
	ctx := locktest.Ctx(t)
	type in struct {
		stored      string
		codec       legacy.ValueCodec
		unit        string
		w, lease    int64
		now, margin int64 // the caller's now; the margin in ms
		cutoff      int64
	}
	run := func(a in) (code, state, serverNow int64) {
		t.Helper()
		r, err := tg.Client.Eval(ctx, script, []string{"unused"}, a.stored, a.codec.String(), a.unit,
			strconv.FormatInt(a.w, 10), strconv.FormatInt(a.lease, 10), strconv.FormatInt(a.now, 10),
			strconv.FormatInt(a.margin, 10), strconv.FormatInt(a.cutoff, 10))
		require.NoError(t, err)
		res := r.([]any)
		n, err := strconv.ParseInt(res[2].(string), 10, 64)
		require.NoError(t, err)
		return res[0].(int64), res[1].(int64), n
	}
	before := time.Now()
	_, _, nowMs := run(in{codec: legacy.ValueDecimal, unit: "ms", lease: 1})
	_, _, nowS := run(in{codec: legacy.ValueDecimal, unit: "s", lease: 1})
	after := time.Now()
	assert.True(t, nowMs >= before.UnixMilli()-1000 && nowMs <= after.UnixMilli()+1000, "server TIME in ms: %d", nowMs)
	assert.True(t, nowS >= before.Unix()-1 && nowS <= after.Unix()+1, "server TIME in s: %d", nowS)

	srv := time.Now().UnixMilli()
	w := srv + 60_000 // a lease of 60 s, well ahead of the server clock
	const lease = 60_000
	dec := legacy.ValueDecimal
	for _, tc := range []struct {
		name string
		in   in
		want int64
	}{
		{"exact", in{fmt.Sprint(w), dec, "ms", w, lease, w - 1, 2000, 0}, 1},
		{"loser overwrite just after", in{fmt.Sprint(w + 7), dec, "ms", w, lease, srv, 2000, 0}, 1},
		{"loser overwrite just before", in{fmt.Sprint(w - 7), dec, "ms", w, lease, srv, 2000, 0}, 1},
		{"window edge", in{fmt.Sprint(w + lease/2), dec, "ms", w, lease, srv, 2000, 0}, 1},
		{"past the window", in{fmt.Sprint(w + lease/2 + 1), dec, "ms", w, lease, srv, 2000, 0}, 0},
		{"successor", in{fmt.Sprint(w + lease + 1), dec, "ms", w, lease, srv, 2000, 0}, 0},
		{"foreign", in{"uuid:" + fmt.Sprint(w), dec, "ms", w, lease, srv, 2000, 0}, 0},
		{"other codec", in{legacy.ValueJavaString.Encode(w), dec, "ms", w, lease, srv, 2000, 0}, 0},
		{"binary codec", in{legacy.ValueJavaLong.Encode(w + 1), legacy.ValueJavaLong, "ms", w, lease, srv, 2000, 0}, 1},
		{"gone", in{"", dec, "ms", w, lease, srv, 2000, 0}, -1},
		// W's own digits skip the decoder only where they decode to W.
		{"json-number exact", in{fmt.Sprint(w), legacy.ValueJSONNumber, "ms", w, lease, srv, 2000, 0}, 1},
		{"json-string exact", in{legacy.ValueJSONString.Encode(w), legacy.ValueJSONString, "ms", w, lease, srv, 2000, 0}, 1},
		{"W's digits, json-string codec", in{fmt.Sprint(w), legacy.ValueJSONString, "ms", w, lease, srv, 2000, 0}, 0},
		{"W's digits, jdk-string codec", in{fmt.Sprint(w), legacy.ValueJavaString, "ms", w, lease, srv, 2000, 0}, 0},
		{"W with a sign", in{"+" + fmt.Sprint(w), dec, "ms", w, lease, srv, 2000, 0}, 1},
		{"W zero-padded", in{"0" + fmt.Sprint(w), dec, "ms", w, lease, srv, 2000, 0}, 1},
		// The caller's clock decides, as the Java seed's release: now < W.
		{"our now reached W", in{fmt.Sprint(w), dec, "ms", w, lease, w, 2000, 0}, -2},
		{"our now past W", in{fmt.Sprint(w), dec, "ms", w, lease, w + 20, 2000, 0}, -2},
		// The server's clock behind ours never permits: W passed by our clock.
		{"server behind, W passed by ours", in{fmt.Sprint(srv + 50), dec, "ms", srv + 50, lease, srv + 70, 2000, 0}, -2},
		// The server's clock ahead of ours within the margin: no refusal.
		{"server ahead within the margin", in{fmt.Sprint(srv - 1000), dec, "ms", srv - 1000, lease, srv - 1001, 2000, 0}, 1},
		// Beyond the margin the server refuses: the script ran late.
		{"server past W + margin", in{fmt.Sprint(srv - 120_000), dec, "ms", srv - 120_000, lease, srv - 120_001, 2000, 0},
			-3},
		{"margin 0", in{fmt.Sprint(srv - 1000), dec, "ms", srv - 1000, lease, srv - 1001, 0, 0}, -3},
		{"seconds", in{fmt.Sprint(w / 1000), dec, "s", w / 1000, lease / 1000, srv / 1000, 2000, 0}, 1},
		{"seconds, our now reached W", in{fmt.Sprint(w / 1000), dec, "s", w / 1000, lease / 1000, w / 1000, 2000, 0}, -2},
		{"seconds, server past W + margin", in{fmt.Sprint(srv/1000 - 120), dec, "s", srv/1000 - 120, lease / 1000,
			srv/1000 - 121, 2000, 0}, -3},
	} {
		code, _, _ := run(tc.in)
		assert.Equal(t, tc.want, code, tc.name)
	}

	// legacy_state: free, expired (strictly), live, foreign.
	for _, tc := range []struct {
		stored string
		cutoff int64
		want   int64
	}{
		{"", 100, 1}, {"99", 100, 2}, {"100", 100, 0}, {"101", 100, 0}, {"-5", 100, 2}, {"1.0", 100, -1}, {" 99", 100, -1},
	} {
		_, state, _ := run(in{stored: tc.stored, codec: dec, unit: "ms", lease: 1, cutoff: tc.cutoff})
		assert.Equal(t, tc.want, state, "%q at %d", tc.stored, tc.cutoff)
	}
}
