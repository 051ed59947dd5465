package migrate

import (
	"fmt"
	"strings"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/internal/keyslot"
)

// ModernSuffix is appended to the legacy key to name the modern key.
const ModernSuffix = ":modern"

// DeriveModernKey returns the modern key for an (encoded) legacy key, in the
// legacy key's hash slot so one script can touch both in Redis Cluster:
// legacyKey+":modern" when legacyKey has a hash tag, "{"+legacyKey+"}:modern"
// otherwise. When neither form shares the slot (a binary key with a stray
// '}', say) the error wraps lockbridge.ErrInvalid: give WithModernKey a
// mapping of your own.
func DeriveModernKey(legacyKey string) (string, error) {
	name, ok := keyslot.Companion(legacyKey, ModernSuffix)
	if !ok {
		return "", fmt.Errorf("migrate: %w: no modern key in the slot of legacy key %q; use WithModernKey", lockbridge.ErrInvalid, legacyKey)
	}
	return name, nil
}

// sameSlot checks a custom mapping's result.
func sameSlot(legacyKey, modernKey string) error {
	if modernKey == "" || modernKey == legacyKey {
		return fmt.Errorf("migrate: %w: modern key %q for legacy key %q must be another, non-empty key", lockbridge.ErrInvalid, modernKey, legacyKey)
	}
	if keyslot.Of(legacyKey) != keyslot.Of(modernKey) {
		return fmt.Errorf("migrate: %w: modern key %q is not in the hash slot of legacy key %q", lockbridge.ErrInvalid, modernKey, legacyKey)
	}
	return nil
}

// nsKeys names the keys of one migration namespace. They share the hash tag
// {ns}, so they live in one slot.
type nsKeys struct {
	ns                                     string
	phase, since, fleet, sighting, channel string
}

func newNSKeys(ns string) (nsKeys, error) {
	if ns == "" || strings.ContainsAny(ns, "{}") {
		return nsKeys{}, fmt.Errorf("migrate: %w: namespace %q must be non-empty and without braces", lockbridge.ErrInvalid, ns)
	}
	p := "lockbridge:{" + ns + "}:"
	return nsKeys{
		ns:       ns,
		phase:    p + "phase",
		since:    p + "phase-since",
		fleet:    p + "fleet",
		sighting: p + "legacy-sighting",
		channel:  p + "phase-changed",
	}, nil
}
