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

// TTL checks a lease: at least min (one millisecond for millisecond schemes).
func TTL(pkg string, ttl, min time.Duration) error {
	if ttl < min {
		return fmt.Errorf("%s: %w: ttl %v is below %v", pkg, lockbridge.ErrInvalid, ttl, min)
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
