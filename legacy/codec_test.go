package legacy_test

import (
	"encoding/hex"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/internal/protocol/legacyproto"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/legacy"
)

// unhex decodes hex (spaces allowed).
func unhex(t testing.TB, s string) string {
	t.Helper()
	b, err := hex.DecodeString(strings.NewReplacer(" ", "", "\n", "", "\t", "").Replace(s))
	require.NoError(t, err)
	return string(b)
}

// The bytes the Java serializers write, as OpenJDK 17 produces them.
const (
	hexDecimal    = "31 37 30 30 30 30 30 30 30 30 30 30 31"
	hexJavaString = "ac ed 00 05 74 00 0d 31 37 30 30 30 30 30 30 30 30 30 30 31"
	hexJavaLong   = "ac ed 00 05 73 72 00 0e 6a 61 76 61 2e 6c 61 6e 67 2e 4c 6f 6e 67" +
		"3b 8b e4 90 cc 8f 23 df 02 00 01 4a 00 05 76 61 6c 75 65 78" +
		"72 00 10 6a 61 76 61 2e 6c 61 6e 67 2e 4e 75 6d 62 65 72" +
		"86 ac 95 1d 0b 94 e0 8b 02 00 00 78 70" +
		"00 00 01 8b cf e5 68 01"
	hexJSONString = "22 31 37 30 30 30 30 30 30 30 30 30 30 31 22"
)

func TestValueCodecGoldenBytes(t *testing.T) {
	const v = 1700000000001
	for _, tc := range []struct {
		codec legacy.ValueCodec
		hex   string
		id    string
	}{
		{legacy.ValueDecimal, hexDecimal, "decimal"},
		{legacy.ValueJavaString, hexJavaString, "jdk-string"},
		{legacy.ValueJavaLong, hexJavaLong, "jdk-long"},
		{legacy.ValueJSONString, hexJSONString, "json-string"},
		{legacy.ValueJSONNumber, hexDecimal, "json-number"},
	} {
		t.Run(tc.id, func(t *testing.T) {
			want := unhex(t, tc.hex)
			got := tc.codec.Encode(v)
			assert.Equal(t, hex.EncodeToString([]byte(want)), hex.EncodeToString([]byte(got)))
			back, err := tc.codec.Decode(got)
			require.NoError(t, err)
			assert.Equal(t, int64(v), back)
			assert.Equal(t, tc.id, tc.codec.String())
			parsed, err := legacy.ParseValueCodec(tc.id)
			require.NoError(t, err)
			assert.Equal(t, tc.codec, parsed)
		})
	}
	assert.Len(t, unhex(t, hexJavaLong), 82, "a JDK Long is 82 bytes")
	assert.Len(t, unhex(t, hexJavaString), 20)
	assert.Equal(t, []legacy.ValueCodec{legacy.ValueDecimal, legacy.ValueJavaString, legacy.ValueJavaLong,
		legacy.ValueJSONString, legacy.ValueJSONNumber}, legacy.ValueCodecs())
}

func TestValueCodecRoundTrips(t *testing.T) {
	for _, c := range legacy.ValueCodecs() {
		for _, v := range []int64{0, 1, -1, 1700000000001, 1700000061, math.MaxInt64, math.MinInt64, 1 << 53,
			-(1 << 53) - 1} {
			got, err := c.Decode(c.Encode(v))
			require.NoError(t, err, "%v %d", c, v)
			assert.Equal(t, v, got, "%v", c)
		}
	}
}

func TestValueCodecForeign(t *testing.T) {
	for _, s := range []string{"", "uuid:1700000000001", "1.7E12", "1700000000001.0", " 1700000000001",
		"1700000000001\n", "9223372036854775808", "١٢٣", "0x10", "1_000", `["java.lang.Long",1700000000001]`} {
		_, err := legacy.ValueDecimal.Decode(s)
		var fe *legacy.ForeignValueError
		require.ErrorAs(t, err, &fe, "%q", s)
		assert.Equal(t, s, fe.Value)
		assert.Equal(t, len(s), fe.Size)
		assert.Equal(t, legacy.ValueDecimal, fe.Codec)
		assert.True(t, strings.HasPrefix(err.Error(), "legacy: foreign value "), err.Error())
	}
	// Another codec's bytes are foreign too.
	_, err := legacy.ValueJavaLong.Decode(legacy.ValueJavaString.Encode(1))
	assert.ErrorAs(t, err, new(*legacy.ForeignValueError))
	_, err = legacy.ValueDecimal.Decode(legacy.ValueJSONString.Encode(1))
	assert.ErrorAs(t, err, new(*legacy.ForeignValueError))

	// The message shows the bytes, quoted, cut after 64.
	long := strings.Repeat("\xac", 100)
	_, err = legacy.ValueDecimal.Decode(long)
	assert.Contains(t, err.Error(), `"`+strings.Repeat(`\xac`, 64)+`"…`)
	assert.Contains(t, err.Error(), "(100 bytes)")

	assert.Equal(t, `legacy: foreign value "ab" (2 bytes) does not decode as jdk-long`,
		(&legacy.ForeignValueError{Value: "ab", Codec: legacy.ValueJavaLong}).Error())
	assert.Equal(t, `legacy: foreign value "ab"… (9 bytes) does not decode as decimal`,
		(&legacy.ForeignValueError{Value: "ab", Size: 9}).Error())

	// An invalid codec is an invalid argument, not a foreign value.
	_, err = legacy.ValueCodec(42).Decode("1")
	assert.ErrorIs(t, err, lockbridge.ErrInvalid)
	assert.Equal(t, "", legacy.ValueCodec(42).Encode(1))
	assert.Equal(t, "ValueCodec(42)", legacy.ValueCodec(42).String())
	_, err = legacy.ParseValueCodec("xml")
	assert.ErrorIs(t, err, lockbridge.ErrInvalid)
}

func TestKeyCodecGoldenBytes(t *testing.T) {
	for _, tc := range []struct {
		name, hex string
	}{
		{"lock:order", "ac ed 00 05 74 00 0a 6c 6f 63 6b 3a 6f 72 64 65 72"},
		{"", "ac ed 00 05 74 00 00"},
		{"é", "ac ed 00 05 74 00 02 c3 a9"},
		{"\x00", "ac ed 00 05 74 00 02 c0 80"},
		{"\U0001F600", "ac ed 00 05 74 00 06 ed a0 bd ed b8 80"},
		{"a\u07ff\u0800\uffff", "ac ed 00 05 74 00 09 61 df bf e0 a0 80 ef bf bf"},
	} {
		got, err := legacy.KeyJavaString.Encode(tc.name)
		require.NoError(t, err)
		assert.Equal(t, strings.ReplaceAll(tc.hex, " ", ""), hex.EncodeToString([]byte(got)), "%q", tc.name)
	}
	raw, err := legacy.KeyRaw.Encode("lock:order")
	require.NoError(t, err)
	assert.Equal(t, "6c6f636b3a6f72646572", hex.EncodeToString([]byte(raw)))

	assert.Equal(t, "raw", legacy.KeyRaw.String())
	assert.Equal(t, "jdk-string", legacy.KeyJavaString.String())
	k, err := legacy.ParseKeyCodec("jdk-string")
	require.NoError(t, err)
	assert.Equal(t, legacy.KeyJavaString, k)
	_, err = legacy.ParseKeyCodec("utf-16")
	assert.ErrorIs(t, err, lockbridge.ErrInvalid)
}

// Above 65535 bytes of modified UTF-8 the JDK writes TC_LONGSTRING (0x7c)
// and a u64 length.
func TestKeyCodecLongString(t *testing.T) {
	// A 70000-char string: longer than 65535 bytes of modified UTF-8.
	got, err := legacy.KeyJavaString.Encode(strings.Repeat("x", 70000))
	require.NoError(t, err)
	assert.Equal(t, "aced00057c000000000001117078", hex.EncodeToString([]byte(got[:14])))
	assert.Len(t, got, 4+1+8+70000)

	// The boundary: 65535 bytes still fit TC_STRING, 65536 do not.
	got, err = legacy.KeyJavaString.Encode(strings.Repeat("k", 65535))
	require.NoError(t, err)
	assert.Equal(t, "aced000574ffff6b", hex.EncodeToString([]byte(got[:8])))
	assert.Len(t, got, 7+65535)
	got, err = legacy.KeyJavaString.Encode(strings.Repeat("k", 65536))
	require.NoError(t, err)
	assert.Equal(t, "aced00057c00000000000100006b", hex.EncodeToString([]byte(got[:14])))

	// The length counts modified UTF-8 bytes, not UTF-8 ones: 32768 NULs
	// are 32768 bytes of UTF-8 but 65536 of modified UTF-8.
	got, err = legacy.KeyJavaString.Encode(strings.Repeat("\x00", 32768))
	require.NoError(t, err)
	assert.Equal(t, "aced00057c0000000000010000c080", hex.EncodeToString([]byte(got[:15])))

	// What a Java String cannot hold: invalid UTF-8.
	_, err = legacy.KeyJavaString.Encode("a\xffb")
	assert.ErrorIs(t, err, lockbridge.ErrInvalid)
	_, err = legacy.KeyCodec(5).Encode("a")
	assert.ErrorIs(t, err, lockbridge.ErrInvalid)
}

func TestProfileArithmetic(t *testing.T) {
	now := time.UnixMilli(1699999999000).Add(700 * time.Microsecond)

	p, err := legacyproto.NewProfile()
	require.NoError(t, err)
	assert.Equal(t, legacyproto.Profile{}, p, "the zero Profile is the default")
	assert.Equal(t, int64(1700000000001), p.Expiry(now, time.Second), "now + lease + 1, in ms")
	assert.Equal(t, int64(1700000000001), p.Expiry(now, time.Second+999*time.Microsecond),
		"the lease is truncated to whole ms")
	assert.Equal(t, "ms", p.UnitID())
	assert.Equal(t, "decimal", p.CodecID())
	assert.Equal(t, time.Millisecond, p.Unit())
	assert.True(t, p.PlusOne())
	assert.Equal(t, "key raw, value decimal, ms, +1", p.String())

	p, err = legacyproto.NewProfile(legacy.WithPlusOne(false))
	require.NoError(t, err)
	assert.Equal(t, int64(1700000000000), p.Expiry(now, time.Second))

	p, err = legacyproto.NewProfile(legacy.WithUnit(time.Second))
	require.NoError(t, err)
	sec := time.Unix(1700000000, 999999999)
	assert.Equal(t, int64(1700000061), p.Expiry(sec, time.Minute), "the redis.io recipe: seconds + timeout + 1")
	assert.Equal(t, int64(1700000061), p.Expiry(sec, time.Minute+999*time.Millisecond))
	assert.Equal(t, "s", p.UnitID())
	assert.Equal(t, time.Unix(1700000061, 0), p.TimeOf(1700000061))
	require.ErrorIs(t, p.CheckTTL(999*time.Millisecond), lockbridge.ErrInvalid)
	require.NoError(t, p.CheckTTL(time.Second))

	// Expired is strict: a value equal to now is live, and stays live until
	// the next unit starts.
	p = legacyproto.Profile{}
	nowMs := time.UnixMilli(1700000000000).Add(300 * time.Microsecond)
	assert.False(t, p.Expired(1700000000000, nowMs))
	assert.True(t, p.Expired(1699999999999, nowMs))
	assert.Equal(t, 700*time.Microsecond, p.Remaining(1700000000000, nowMs))
	assert.Equal(t, time.Duration(0), p.Remaining(1699999999999, nowMs))
	assert.Equal(t, time.Second+700*time.Microsecond, p.Remaining(1700000001000, nowMs))

	// Profiles come from the same options as lockers, with the same checks.
	_, err = legacyproto.NewProfile(legacy.WithUnit(time.Minute))
	assert.ErrorIs(t, err, lockbridge.ErrInvalid)
	p, err = legacyproto.NewProfile(legacy.WithKeyCodec(legacy.KeyJavaString), legacy.WithValueCodec(legacy.ValueJavaLong),
		legacy.WithClassic(), legacy.WithSafetyTTL(time.Minute))
	require.NoError(t, err)
	assert.Equal(t, legacy.KeyJavaString, p.KeyCodec())
	assert.Equal(t, legacy.ValueJavaLong, p.ValueCodec())
	k, err := p.EncodeKey("lock:order")
	require.NoError(t, err)
	assert.Equal(t, unhex(t, "ac ed 00 05 74 00 0a 6c 6f 63 6b 3a 6f 72 64 65 72"), k)
	assert.Equal(t, unhex(t, hexJavaLong), p.EncodeValue(1700000000001))
	v, err := p.DecodeValue(unhex(t, hexJavaLong))
	require.NoError(t, err)
	assert.Equal(t, int64(1700000000001), v)
	_, err = p.DecodeValue("1700000000001")
	assert.ErrorAs(t, err, new(*legacy.ForeignValueError))

	// Key limits: empty, longer than 64 KiB, not encodable.
	for _, name := range []string{"", strings.Repeat("k", 64<<10+1)} {
		_, err = p.EncodeKey(name)
		assert.ErrorIs(t, err, lockbridge.ErrInvalid)
	}
	_, err = p.EncodeKey("\xff")
	assert.ErrorIs(t, err, lockbridge.ErrInvalid)
	_, err = p.EncodeKey(strings.Repeat("k", 64<<10))
	assert.NoError(t, err)

	clock := locktest.At(time.Unix(42, 0))
	p, err = legacyproto.NewProfile(legacy.WithClock(clock))
	require.NoError(t, err)
	assert.Equal(t, time.Unix(42, 0), p.Now())

	// The margins: defaults, the cutoff (skew margin rounded up to whole
	// units), and the owner-window arguments (server margin rounded up to ms).
	assert.Equal(t, time.Duration(0), p.SkewMargin())
	assert.Equal(t, 2*time.Second, p.ServerClockMargin())
	assert.Equal(t, int64(42_000), p.Cutoff(time.Unix(42, 0)), "no margin: the Java rule")
	assert.Equal(t, []any{"decimal", "ms", "43000", "500", "42000", "2000"}, p.OwnerArgs(43000, 500*time.Millisecond))
	p, err = legacyproto.NewProfile(legacy.WithSkewMargin(1500*time.Microsecond),
		legacy.WithServerClockMargin(10*time.Microsecond))
	require.NoError(t, err)
	assert.Equal(t, int64(1700000000000-2), p.Cutoff(nowMs), "1.5 ms rounds up to 2")
	assert.True(t, p.Expired(1699999999997, nowMs))
	assert.False(t, p.Expired(1699999999998, nowMs))
	assert.Equal(t, 700*time.Microsecond, p.Remaining(1699999999998, nowMs), "live until now − 2 ms passes it")
	assert.Equal(t, "1", p.OwnerArgs(0, time.Millisecond)[5], "10 µs rounds up to 1 ms")
	p, err = legacyproto.NewProfile(legacy.WithUnit(time.Second), legacy.WithSkewMargin(time.Millisecond),
		legacy.WithServerClockMargin(0))
	require.NoError(t, err)
	assert.Equal(t, int64(1700000000-1), p.Cutoff(nowMs), "1 ms rounds up to one second")
	assert.Equal(t, time.Duration(0), p.ServerClockMargin())
}

func TestForeignValueErrorIsNotSentinel(t *testing.T) {
	_, err := legacy.ValueDecimal.Decode("x")
	assert.False(t, errors.Is(err, lockbridge.ErrInvalid))
	assert.False(t, errors.Is(err, lockbridge.ErrNotObtained), "the bare decode error; TryLock adds ErrNotObtained")
}
