package check

import (
	"context"
	"fmt"
	"time"

	"github.com/lockbridge/lockbridge"
)

// MaxKeyLen is the longest key accepted: Redis allows 512 MB, but a lock name
// this long is a bug, not a name.
const MaxKeyLen = 64 << 10

// Key checks a lock name: not empty, at most MaxKeyLen bytes.
func Key(pkg, key string) error {
	switch {
	case key == "":
		return fmt.Errorf("%s: %w: empty key", pkg, lockbridge.ErrInvalid)
	case len(key) > MaxKeyLen:
		return fmt.Errorf("%s: %w: key of %d bytes is longer than %d", pkg, lockbridge.ErrInvalid, len(key), MaxKeyLen)
	}
	return nil
}

// MaxTTL is the longest lease any lock accepts: 2^40 ms, about 34.8
// years. Every ttl passes through TTL, the one check all lock packages
// share, so no locker sends more than the scripts and time.Duration
// arithmetic carry: a legacy expiry now + ttl (+1 unit) in ms stays an
// exact Lua number (below 2^53), a safety TTL of twice the ttl, a PX
// rounded up from W − now, and start + ttl on the monotonic clock stay far
// from overflowing int64 nanoseconds (2^63 ns is about 292 years); it is
// also the longest hold migrate's registry counts for.
const MaxTTL = (1 << 40) * time.Millisecond

// TTL checks a lease: at least min (one millisecond for millisecond
// schemes), at most MaxTTL.
func TTL(pkg string, ttl, min time.Duration) error {
	switch {
	case ttl < min:
		return fmt.Errorf("%s: %w: ttl %v is below %v", pkg, lockbridge.ErrInvalid, ttl, min)
	case ttl > MaxTTL:
		return fmt.Errorf("%s: %w: ttl %v is above %v, the longest lease the scripts and time arithmetic carry", pkg,
			lockbridge.ErrInvalid, ttl, MaxTTL)
	}
	return nil
}

// KeyTTL checks both, in that order.
func KeyTTL(pkg, key string, ttl, min time.Duration) error {
	if err := Key(pkg, key); err != nil {
		return err
	}
	return TTL(pkg, ttl, min)
}

// Context checks that ctx is not nil: every call that talks to Redis needs
// one, and a nil one would panic deep inside a client library.
func Context(pkg string, ctx context.Context) error {
	if ctx == nil {
		return fmt.Errorf("%s: %w: nil context", pkg, lockbridge.ErrInvalid)
	}
	return nil
}
