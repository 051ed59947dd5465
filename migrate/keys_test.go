package migrate

import (
	"testing"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/internal/keyslot"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDeriveModernKey(t *testing.T) {
	for legacy, want := range map[string]string{
		"lock:order":                          "{lock:order}:modern",
		"{tenant7}:lock":                      "{tenant7}:lock:modern",
		"\xac\xed\x00\x05t\x00\x0alock:order": "{\xac\xed\x00\x05t\x00\x0alock:order}:modern",
	} {
		got, err := DeriveModernKey(legacy)
		require.NoError(t, err, legacy)
		assert.Equal(t, want, got)
		assert.Equal(t, keyslot.Of(legacy), keyslot.Of(got), "same slot as %q", legacy)
	}
	_, err := DeriveModernKey("odd}key")
	assert.ErrorIs(t, err, lockbridge.ErrInvalid)
}

func TestSameSlot(t *testing.T) {
	assert.NoError(t, sameSlot("{a}x", "{a}y"))
	assert.ErrorIs(t, sameSlot("a", "b"), lockbridge.ErrInvalid)
	assert.ErrorIs(t, sameSlot("a", "a"), lockbridge.ErrInvalid)
	assert.ErrorIs(t, sameSlot("a", ""), lockbridge.ErrInvalid)
}

func TestNamespaceKeys(t *testing.T) {
	k, err := newNSKeys("orders")
	require.NoError(t, err)
	assert.Equal(t, "lockbridge:{orders}:phase", k.phase)
	assert.Equal(t, "lockbridge:{orders}:fleet", k.fleet)
	for _, bad := range []string{"", "a{b", "}"} {
		_, err := newNSKeys(bad)
		assert.ErrorIs(t, err, lockbridge.ErrInvalid, bad)
	}
}
