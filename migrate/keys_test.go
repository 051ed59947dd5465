package migrate

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/driver/keyslot"
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
	_, err := DeriveModernKey("")
	assert.ErrorIs(t, err, lockbridge.ErrInvalid)
}

// Keys that neither form puts in their slot get a slot tag of their own.
// Every slot has a tag; the name keeps the legacy key, so it is unique.
func TestDeriveModernKeySlotTag(t *testing.T) {
	for slot := 0; slot < keyslot.Slots; slot++ {
		tag := slotTag(slot)
		require.NotEmpty(t, tag, "slot %d", slot)
		require.Equal(t, slot, keyslot.Of(tag))
	}
	for _, legacy := range []string{"odd}key", "}", "{}x", "a}{b", "\xac\xed\x00\x05t\x00}" + strings.Repeat("n", 125)} {
		got, err := DeriveModernKey(legacy)
		require.NoError(t, err, "%q", legacy)
		assert.Equal(t, keyslot.Of(legacy), keyslot.Of(got), "%q -> %q", legacy, got)
		assert.Equal(t, keyslot.Of(got), keyslot.Of(got+":fence"), "its fence counter shares the slot")
		assert.Contains(t, got, legacy)
		assert.Regexp(t, `^\{\d+\}`, got)
	}
	assert.Equal(t, "{"+slotTag(keyslot.Of("odd}key"))+"}odd}key:modern", must(DeriveModernKey("odd}key")))
}

func must(s string, err error) string {
	if err != nil {
		panic(err)
	}
	return s
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
