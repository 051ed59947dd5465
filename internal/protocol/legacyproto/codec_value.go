package legacyproto

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"

	"github.com/lockbridge/lockbridge"
)

// ValueCodec is how a Java service stores the expiry (documented as
// legacy.ValueCodec).
type ValueCodec int

// The value codecs (documented in the legacy package).
const (
	ValueDecimal ValueCodec = iota
	ValueJavaString
	ValueJavaLong
	ValueJSONString
	ValueJSONNumber
)

// ValueCodecs returns every value codec, in declaration order: what a tool
// that decodes an unknown value (the CLI's inspect) tries in turn.
func ValueCodecs() []ValueCodec {
	return []ValueCodec{ValueDecimal, ValueJavaString, ValueJavaLong, ValueJSONString, ValueJSONNumber}
}

var valueCodecIDs = [...]string{
	ValueDecimal:    "decimal",
	ValueJavaString: "jdk-string",
	ValueJavaLong:   "jdk-long",
	ValueJSONString: "json-string",
	ValueJSONNumber: "json-number",
}

// Valid reports whether c is a known codec.
func (c ValueCodec) Valid() bool { return c >= 0 && int(c) < len(valueCodecIDs) }

// String returns the codec's id: "decimal", "jdk-string", "jdk-long",
// "json-string" or "json-number". It is also the codec argument of the Lua
// fragment legacy_decode (internal/protocol/luafrag/legacy_decode.lua).
func (c ValueCodec) String() string {
	if !c.Valid() {
		return "ValueCodec(" + strconv.Itoa(int(c)) + ")"
	}
	return valueCodecIDs[c]
}

// ParseValueCodec returns the codec whose String is id. Unknown ids give an
// error wrapping lockbridge.ErrInvalid.
func ParseValueCodec(id string) (ValueCodec, error) {
	for _, c := range ValueCodecs() {
		if c.String() == id {
			return c, nil
		}
	}
	return 0, fmt.Errorf("legacy: %w: unknown value codec %q", lockbridge.ErrInvalid, id)
}

// jdkStream is the JDK serialization stream header (STREAM_MAGIC 0xaced,
// STREAM_VERSION 5).
const jdkStream = "\xac\xed\x00\x05"

// jdkString starts a JDK-serialized String of at most 65535 bytes
// (TC_STRING); a u16 length follows.
const jdkString = jdkStream + "\x74"

// jdkLong is the 74-byte prefix of every JDK-serialized java.lang.Long:
// TC_OBJECT, the class descriptor of java.lang.Long (serialVersionUID
// 4290774380558885855, one field "value" of type J) and of its superclass
// java.lang.Number, TC_NULL; the value follows as a big-endian int64.
const jdkLong = jdkStream + "\x73\x72\x00\x0ejava.lang.Long" +
	"\x3b\x8b\xe4\x90\xcc\x8f\x23\xdf\x02\x00\x01\x4a\x00\x05value\x78" +
	"\x72\x00\x10java.lang.Number" +
	"\x86\xac\x95\x1d\x0b\x94\xe0\x8b\x02\x00\x00\x78\x70"

// Encode returns the bytes the Java side writes for the expiry v. An
// invalid codec encodes as "" (options reject it before any write).
func (c ValueCodec) Encode(v int64) string {
	d := strconv.FormatInt(v, 10)
	switch c {
	case ValueDecimal, ValueJSONNumber:
		return d
	case ValueJSONString:
		return `"` + d + `"`
	case ValueJavaString:
		return jdkString + string([]byte{byte(len(d) >> 8), byte(len(d))}) + d
	case ValueJavaLong:
		var b [8]byte
		binary.BigEndian.PutUint64(b[:], uint64(v))
		return jdkLong + string(b[:])
	}
	return ""
}

// Decode returns the expiry stored as s. When s does not decode under c the
// error is a *ForeignValueError; an invalid codec gives an error wrapping
// lockbridge.ErrInvalid. Decode accepts and refuses exactly the byte strings
// the Lua fragment legacy_decode does.
func (c ValueCodec) Decode(s string) (int64, error) {
	var (
		v  int64
		ok bool
	)
	switch c {
	case ValueDecimal, ValueJSONNumber:
		v, ok = parseDecimal(s)
	case ValueJSONString:
		if len(s) >= 3 && s[0] == '"' && s[len(s)-1] == '"' {
			v, ok = parseDecimal(s[1 : len(s)-1])
		}
	case ValueJavaString:
		if len(s) >= 7 && strings.HasPrefix(s, jdkString) && int(s[5])<<8|int(s[6]) == len(s)-7 {
			v, ok = parseDecimal(s[7:])
		}
	case ValueJavaLong:
		if len(s) == len(jdkLong)+8 && strings.HasPrefix(s, jdkLong) {
			v, ok = int64(binary.BigEndian.Uint64([]byte(s[len(jdkLong):]))), true
		}
	default:
		return 0, fmt.Errorf("legacy: %w: unknown value codec %v", lockbridge.ErrInvalid, c)
	}
	if !ok {
		return 0, &ForeignValueError{Value: s, Size: len(s), Codec: c}
	}
	return v, nil
}

// parseDecimal is the strict decimal: an optional sign, 1 to 19 ASCII
// digits, nothing else, within the int64 range. That is what
// Long.parseLong accepts in ASCII, save runs of leading zeros beyond 19
// digits (refused here: no Java writer produces them).
func parseDecimal(s string) (int64, bool) {
	digits := s
	if len(digits) > 0 && (digits[0] == '+' || digits[0] == '-') {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 19 {
		return 0, false
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return 0, false
		}
	}
	v, err := strconv.ParseInt(s, 10, 64) // only the range can fail here
	return v, err == nil
}
