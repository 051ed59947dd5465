package keyslot

import (
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestOfMatchesTheClusterSpec(t *testing.T) {
	// The check value of CRC-16/XMODEM and slots published in the cluster
	// specification and the CLUSTER KEYSLOT documentation.
	assert.Equal(t, uint16(0x31C3), crc16("123456789"))
	for key, slot := range map[string]int{
		"foo":                  12182,
		"bar":                  5061,
		"somekey":              11058,
		"foo{hash_tag}":        2515,
		"{hash_tag}bar":        2515,
		"{user1000}.following": 3443,
		"{user1000}.followers": 3443,
		"foo{}{bar}":           Of("foo{}{bar}"),
		"":                     0,
	} {
		assert.Equal(t, slot, Of(key), key)
	}
}

func TestTag(t *testing.T) {
	for _, tc := range []struct {
		key, tag string
		ok       bool
	}{
		{"plain", "plain", false},
		{"{a}b", "a", true},
		{"x{a}{b}", "a", true},
		{"{}a", "{}a", false},
		{"foo{}{bar}", "foo{}{bar}", false},
		{"foo{{bar}}", "{bar", true},
		{"open{only", "open{only", false},
		{"close}only", "close}only", false},
		{"\xac\xed\x00\x05t\x00\x05{a}bc", "a", true},
	} {
		tag, ok := Tag(tc.key)
		assert.Equal(t, tc.tag, tag, tc.key)
		assert.Equal(t, tc.ok, ok, tc.key)
	}
}

func TestCompanion(t *testing.T) {
	for _, tc := range []struct {
		key, want string
		ok        bool
	}{
		{"lock:order", "{lock:order}:x", true},
		{"{user1}:lock", "{user1}:lock:x", true},
		{"a{b", "{a{b}:x", true},
		{"\xac\xed\x00\x05t\x00\x0alock:order", "{\xac\xed\x00\x05t\x00\x0alock:order}:x", true},
		{"stray}brace", "{stray}brace}:x", false},
	} {
		name, ok := Companion(tc.key, ":x")
		assert.Equal(t, tc.want, name, tc.key)
		assert.Equal(t, tc.ok, ok, tc.key)
		if ok {
			assert.Equal(t, Of(tc.key), Of(name), tc.key)
		}
	}
}

// Companion's shortcuts (a tagged key; an untagged key without '}') agree
// with hashing both names, on keys built from the characters that matter.
func TestCompanionShortcutsAgreeWithHashing(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	alphabet := []byte("{}ab:")
	for i := 0; i < 200000; i++ {
		b := make([]byte, rng.Intn(9))
		for j := range b {
			b[j] = alphabet[rng.Intn(len(alphabet))]
		}
		key := string(b)
		name, ok := Companion(key, ":released")
		want := key + ":released"
		if _, tagged := Tag(key); !tagged {
			want = "{" + key + "}:released"
		}
		if name != want || ok != (Of(name) == Of(key)) {
			t.Fatalf("Companion(%q) = %q, %v; want %q, %v", key, name, ok, want, Of(want) == Of(key))
		}
	}
}
