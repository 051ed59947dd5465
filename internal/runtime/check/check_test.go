package check

import (
	"strings"
	"testing"
	"time"

	"github.com/lockbridge/lockbridge"
	"github.com/stretchr/testify/assert"
)

func TestKeyTTL(t *testing.T) {
	for _, tc := range []struct {
		name string
		key  string
		ttl  time.Duration
		ok   bool
	}{
		{"fine", "k", time.Millisecond, true},
		{"binary key", "\xac\xed\x00\x05", time.Second, true},
		{"empty key", "", time.Second, false},
		{"huge key", strings.Repeat("k", MaxKeyLen+1), time.Second, false},
		{"zero ttl", "k", 0, false},
		{"negative ttl", "k", -time.Second, false},
		{"sub-millisecond ttl", "k", time.Microsecond, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := KeyTTL("pkg", tc.key, tc.ttl, time.Millisecond)
			if tc.ok {
				assert.NoError(t, err)
				return
			}
			assert.ErrorIs(t, err, lockbridge.ErrInvalid)
			assert.True(t, strings.HasPrefix(err.Error(), "pkg: "), err.Error())
		})
	}
}
