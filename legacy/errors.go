package legacy

import (
	"fmt"
	"time"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/internal/protocol/legacyproto"
)

// NotObtainedError is what TryLock returns when a live value holds the
// lock (and what Lock's error wraps when it gives up): the holder's expiry,
// and how long it has left by this locker's clock and skew margin. It wraps
// lockbridge.ErrNotObtained. A value that does not decode is a
// *ForeignValueError instead.
type NotObtainedError struct {
	Key    string
	Expiry int64         // the stored expiry, in the profile's unit
	Until  time.Time     // the instant Expiry stands for
	Left   time.Duration // until a takeover is allowed, from the attempt
}

func (e *NotObtainedError) Error() string {
	return fmt.Sprintf("%s: lock %q is held until %s (%d)", pkg, e.Key, e.Until.UTC().Format(time.RFC3339Nano), e.Expiry)
}

// Unwrap returns lockbridge.ErrNotObtained.
func (e *NotObtainedError) Unwrap() error { return lockbridge.ErrNotObtained }

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
