package modern_test

import (
	"crypto/rand"
	"encoding/base64"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/modern"
)

// asModern asserts that a lockbridge.Lock is a *modern.Lock.
func asModern(t testing.TB, l lockbridge.Lock) *modern.Lock {
	t.Helper()
	ml, ok := l.(*modern.Lock)
	require.True(t, ok, "lock is a %T, not a *modern.Lock", l)
	return ml
}

// countingTokens is a WithTokenFunc that counts acquire attempts.
type countingTokens struct{ n atomic.Int64 }

func (c *countingTokens) token() (string, error) {
	c.n.Add(1)
	return randomToken()
}

// randomToken is a token as the Locker's default draws one: 16 bytes from
// crypto/rand, unpadded base64url.
func randomToken() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// waitDone waits up to d for a lock's Done channel.
func waitDone(t testing.TB, l lockbridge.Lock, d time.Duration) bool {
	t.Helper()
	select {
	case <-l.Done():
		return true
	default:
	}
	select {
	case <-l.Done():
		return true
	case <-time.After(d):
		return false
	}
}

// eventually polls cond every 5 ms for up to 10 s.
func eventually(t testing.TB, cond func() bool, msg string) {
	t.Helper()
	require.Eventually(t, cond, 10*time.Second, 5*time.Millisecond, msg)
}

// lingerEnds checks that l's subscription, which lingers after the last
// wait (WithNotifyLinger), is closed by the end of the linger.
func lingerEnds(t testing.TB, l *modern.Locker, msg string) {
	t.Helper()
	require.Eventually(t, func() bool { return !modern.HubOpen(l) }, modern.DefaultNotifyLinger+5*time.Second,
		5*time.Millisecond, msg+" (after its linger)")
}
