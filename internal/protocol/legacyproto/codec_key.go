package legacyproto

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/lockbridge/lockbridge"
)

// KeyCodec is how a Java service turns the lock name into the Redis key
// (documented as legacy.KeyCodec).
type KeyCodec int

// The key codecs (documented in the legacy package).
const (
	KeyRaw KeyCodec = iota
	KeyJavaString
)

var keyCodecIDs = [...]string{KeyRaw: "raw", KeyJavaString: "jdk-string"}

// Valid reports whether c is a known codec.
func (c KeyCodec) Valid() bool { return c >= 0 && int(c) < len(keyCodecIDs) }

// String returns the codec's id: "raw" or "jdk-string".
func (c KeyCodec) String() string {
	if !c.Valid() {
		return "KeyCodec(" + strconv.Itoa(int(c)) + ")"
	}
	return keyCodecIDs[c]
}

// ParseKeyCodec returns the codec whose String is id. Unknown ids give an
// error wrapping lockbridge.ErrInvalid.
func ParseKeyCodec(id string) (KeyCodec, error) {
	for _, c := range []KeyCodec{KeyRaw, KeyJavaString} {
		if c.String() == id {
			return c, nil
		}
	}
	return 0, fmt.Errorf("legacy: %w: unknown key codec %q", lockbridge.ErrInvalid, id)
}

// maxShortString is the longest modified UTF-8 a TC_STRING holds.
const maxShortString = 0xffff

// Encode returns the Redis key for name. It fails, with an error wrapping
// lockbridge.ErrInvalid, only for what the codec cannot encode: a name that
// is not valid UTF-8 under KeyJavaString, or an invalid codec. Length
// limits are the Profile's (see Profile.EncodeKey); Encode itself takes any
// length, "" included.
func (c KeyCodec) Encode(name string) (string, error) {
	switch c {
	case KeyRaw:
		return name, nil
	case KeyJavaString:
		if !utf8.ValidString(name) {
			return "", fmt.Errorf("legacy: %w: key %q is not valid UTF-8, which a Java String cannot hold",
				lockbridge.ErrInvalid, name)
		}
		n := modifiedUTF8Len(name)
		b := make([]byte, 0, len(jdkStream)+9+n)
		b = append(b, jdkStream...)
		if n <= maxShortString {
			b = append(b, 0x74, byte(n>>8), byte(n))
		} else {
			b = append(b, 0x7c)
			b = binary.BigEndian.AppendUint64(b, uint64(n))
		}
		return string(appendModifiedUTF8(b, name)), nil
	}
	return "", fmt.Errorf("legacy: %w: unknown key codec %v", lockbridge.ErrInvalid, c)
}

// modifiedUTF8Len is the length of s (valid UTF-8) in modified UTF-8.
func modifiedUTF8Len(s string) int {
	n := 0
	for _, r := range s {
		switch {
		case r == 0:
			n += 2
		case r < 0x80:
			n++
		case r < 0x800:
			n += 2
		case r < 0x10000:
			n += 3
		default:
			n += 6 // a surrogate pair, 3 bytes each
		}
	}
	return n
}

// appendModifiedUTF8 appends s (valid UTF-8) in modified UTF-8, as
// java.io.DataOutput.writeUTF writes it: every UTF-16 code unit on its
// own, U+0000 as two bytes.
func appendModifiedUTF8(b []byte, s string) []byte {
	unit := func(b []byte, u rune) []byte {
		switch {
		case u != 0 && u < 0x80:
			return append(b, byte(u))
		case u < 0x800:
			return append(b, 0xc0|byte(u>>6), 0x80|byte(u&0x3f))
		default:
			return append(b, 0xe0|byte(u>>12), 0x80|byte(u>>6&0x3f), 0x80|byte(u&0x3f))
		}
	}
	for _, r := range s {
		if r < 0x10000 {
			b = unit(b, r)
			continue
		}
		r -= 0x10000
		b = unit(b, 0xd800+(r>>10))
		b = unit(b, 0xdc00+(r&0x3ff))
	}
	return b
}
