package migrate

import (
	"fmt"
	"strconv"
	"sync"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/driver/keyslot"
)

// modernSuffix is appended to the legacy key to name the modern key.
const modernSuffix = ":modern"

// DeriveModernKey returns the modern key for an (encoded) legacy key, in the
// legacy key's hash slot so one script can touch both in Redis Cluster:
// legacyKey+":modern" when legacyKey has a hash tag, "{"+legacyKey+"}:modern"
// otherwise. When neither form shares the slot — an untagged key holding a
// '}', such as a JDK-serialized String whose length byte is 0x7d (names of
// 125 or 381 bytes), or an empty tag "{}" — it is "{"+T+"}"+legacyKey+":modern",
// T being the first of the decimal numbers 0, 1, 2, … whose CRC16 slot is
// the legacy key's: the hash tag T puts it in that slot whatever legacyKey
// holds, and legacyKey in the name keeps it unique. The error wraps
// lockbridge.ErrInvalid only for an empty key.
func DeriveModernKey(legacyKey string) (string, error) {
	if legacyKey == "" {
		return "", fmt.Errorf("migrate: %w: empty legacy key", lockbridge.ErrInvalid)
	}
	if name, ok := keyslot.Companion(legacyKey, modernSuffix); ok {
		return name, nil
	}
	return "{" + slotTag(keyslot.Of(legacyKey)) + "}" + legacyKey + modernSuffix, nil
}

var (
	slotTagsOnce sync.Once
	slotTags     [keyslot.Slots]string
)

// slotTag returns the first decimal number, as a string, whose slot is
// slot. The table of all 16384 is built once, on first use.
func slotTag(slot int) string {
	slotTagsOnce.Do(func() {
		left := keyslot.Slots
		for i := 0; left > 0; i++ {
			t := strconv.Itoa(i)
			if s := keyslot.Of(t); slotTags[s] == "" {
				slotTags[s] = t
				left--
			}
		}
	})
	return slotTags[slot]
}

// sameSlot checks a custom mapping's result.
func sameSlot(legacyKey, modernKey string) error {
	if modernKey == "" || modernKey == legacyKey {
		return fmt.Errorf("migrate: %w: modern key %q for legacy key %q must be another, non-empty key",
			lockbridge.ErrInvalid, modernKey, legacyKey)
	}
	if keyslot.Of(legacyKey) != keyslot.Of(modernKey) {
		return fmt.Errorf("migrate: %w: modern key %q is not in the hash slot of legacy key %q", lockbridge.ErrInvalid,
			modernKey, legacyKey)
	}
	return nil
}
