package legacy

import (
	"github.com/lockbridge/lockbridge/internal/protocol/legacyproto"
)

// ForeignValueError is a stored value that does not decode under the
// profile's value codec: a lock written by some other scheme (a
// "uuid:millis" value, a float, a JSON array, another codec's bytes …). It
// is never treated as expired and never taken over. TryLock returns it
// wrapped together with lockbridge.ErrNotObtained; get it with errors.As.
// Its fields: Value, the stored value byte for byte (from TryLock and Lock,
// at most its first 1024 bytes: a foreign value may be large, and a waiter
// reads it on every attempt); Size, its length in bytes; Codec,
// the value codec it failed to decode under.
type ForeignValueError = legacyproto.ForeignValueError
