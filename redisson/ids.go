package redisson

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
)

// newUUID returns a random version-4 UUID in Redisson's form (Java's
// UUID.randomUUID().toString(): 36 characters, lower case).
func newUUID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("redisson: client id: %w", err)
	}
	b[6] = b[6]&0x0f | 0x40 // version 4
	b[8] = b[8]&0x3f | 0x80 // RFC 4122 variant
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:], nil
}

// newRequestID returns an unlock request id in Redisson's form
// (ServiceManager.generateId: 16 random bytes, 32 lower-case hex digits).
func newRequestID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("redisson: unlock request id: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}
