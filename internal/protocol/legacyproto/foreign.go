package legacyproto

import (
	"fmt"
	"strconv"
)

// ForeignValueError is a stored value that does not decode under the
// profile's value codec: a lock written by some other scheme (a
// "uuid:millis" value, a float, a JSON array, another codec's bytes …). It
// is never treated as expired and never taken over. TryLock returns it
// wrapped together with lockbridge.ErrNotObtained; get it with errors.As.
type ForeignValueError struct {
	// Value is the stored value, byte for byte; from TryLock and Lock, at
	// most its first MaxForeignKept bytes.
	Value string
	// Size is the length of the stored value in bytes.
	Size int
	// Codec is the value codec it failed to decode under.
	Codec ValueCodec
}

// MaxForeignKept is how many bytes of a foreign value TryLock and Lock
// fetch and keep in a ForeignValueError: a foreign value may be large, and a
// waiter reads it on every attempt.
const MaxForeignKept = 1024

// Foreign is the error for the stored value s (size bytes in all).
func Foreign(s string, size int, c ValueCodec) *ForeignValueError {
	if len(s) > MaxForeignKept {
		s = s[:MaxForeignKept]
	}
	return &ForeignValueError{Value: s, Size: size, Codec: c}
}

// foreignShown is how many bytes of a foreign value Error shows.
const foreignShown = 64

func (e *ForeignValueError) Error() string {
	v, size := e.Value, e.Size
	if size < len(v) {
		size = len(v)
	}
	if len(v) > foreignShown {
		v = v[:foreignShown]
	}
	more := ""
	if len(v) < size {
		more = "…"
	}
	return fmt.Sprintf("legacy: foreign value %s%s (%d bytes) does not decode as %v", strconv.Quote(v), more, size,
		e.Codec)
}
