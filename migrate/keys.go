package migrate

import (
	"fmt"
	"strconv"
	"strings"
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
		return fmt.Errorf("migrate: %w: modern key %q for legacy key %q must be another, non-empty key", lockbridge.ErrInvalid, modernKey, legacyKey)
	}
	if keyslot.Of(legacyKey) != keyslot.Of(modernKey) {
		return fmt.Errorf("migrate: %w: modern key %q is not in the hash slot of legacy key %q", lockbridge.ErrInvalid, modernKey, legacyKey)
	}
	return nil
}

// nsKeys names the keys of one migration namespace. They share the hash tag
// {ns}, so they live in one slot and one script may touch them all.
type nsKeys struct {
	ns string
	// phase is the phase name (read by lockers of every protocol version);
	// since when it was set (server ms); meta the namespace's durable state
	// (protocol, last phase, highest phase, generation, instance id).
	phase, since, meta, channel string
	// clients, expiry and seen are the registry (protocols 2 and 3): the entries,
	// and their expiry and last heartbeat by the server's clock.
	clients, expiry, seen string
	// fleet is the registry of protocol 1 (fb598b1), read to find clients
	// of the older format; sighting the legacy sightings; pending the
	// stamp of a first init call, from which init counts the namespace's
	// silence.
	fleet, sighting, pending string
	// mark is the namespace's mark: the phase last set, the highest phase,
	// instance and generation, kept apart from the namespace's keys (not
	// under its prefix, not in NamespaceKeys) so that a flush of those
	// leaves the proof that the namespace ran, and where it was.
	mark string
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
		meta:     p + "namespace",
		channel:  p + "phase-changed",
		clients:  p + "clients",
		expiry:   p + "clients-expiry",
		seen:     p + "clients-seen",
		fleet:    p + "fleet",
		sighting: p + "legacy-sighting",
		pending:  p + "init-pending",
		mark:     "lockbridge-mark:{" + ns + "}",
	}, nil
}

// noticeShards is how many channels the phase notices of protocol 3 go
// out on: a follower listens on one, chosen at random, and the controller
// publishes on each in its own call.
const noticeShards = 64

// shard is the name of notice channel i (0 ≤ i < noticeShards).
func (k nsKeys) shard(i int) string { return k.channel + ":" + strconv.Itoa(i) }

// all returns every key of the namespace (not the channel, not the mark).
func (k nsKeys) all() []string {
	return []string{k.phase, k.since, k.meta, k.clients, k.expiry, k.seen, k.fleet, k.sighting, k.pending}
}

// NamespaceKeys returns every Redis key of namespace ns (docs/protocol.md):
// the phase, its history and the registry, for tools that clean up or
// inspect a namespace. The phase-change channel is not a key. Nor is the
// namespace's mark (MarkKey): it outlives these keys, so that a namespace
// whose keys were deleted is never taken for a new one.
func NamespaceKeys(ns string) ([]string, error) {
	k, err := newNSKeys(ns)
	if err != nil {
		return nil, err
	}
	return k.all(), nil
}

// MarkKey returns the key of namespace ns's mark (docs/protocol.md): the
// phase the controller last set, and the highest, written with every
// phase change. It is kept apart from NamespaceKeys: when those are gone
// (a flush, an operator's cleanup), the mark still proves that the
// namespace ran and where it was, and Controller.Init restores that phase
// rather than start the namespace afresh. Delete it only to retire the
// namespace's name for good, once no lock of it is held anywhere.
func MarkKey(ns string) (string, error) {
	k, err := newNSKeys(ns)
	if err != nil {
		return "", err
	}
	return k.mark, nil
}
