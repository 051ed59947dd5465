package migrateproto

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/lockbridge/lockbridge"
)

// Keys names the keys of one migration namespace. They share the hash tag
// {ns}, so they live in one slot and one script may touch them all.
type Keys struct {
	NS string
	// Phase is the phase name (read by lockers of every protocol version);
	// Since when it was set (server ms); Meta the namespace's durable state
	// (protocol, last phase, highest phase, generation, instance id).
	Phase, Since, Meta, Channel string
	// Clients, Expiry and Seen are the registry (protocols 2 and 3): the
	// entries, and their expiry and last heartbeat by the server's clock.
	Clients, Expiry, Seen string
	// Fleet is the registry of protocol 1 (fb598b1), read to find clients
	// of the older format; Sighting the legacy sightings; Pending the
	// stamp of a first init call, from which init counts the namespace's
	// silence.
	Fleet, Sighting, Pending string
	// Mark is the namespace's mark: the phase last set, the highest phase,
	// instance and generation, kept apart from the namespace's keys (not
	// under its prefix, not in All) so that a flush of those leaves the
	// proof that the namespace ran, and where it was.
	Mark string
}

// NewKeys returns the keys of namespace ns; the error wraps
// lockbridge.ErrInvalid for an empty name or one with braces.
func NewKeys(ns string) (Keys, error) {
	if ns == "" || strings.ContainsAny(ns, "{}") {
		return Keys{}, fmt.Errorf("migrate: %w: namespace %q must be non-empty and without braces", lockbridge.ErrInvalid, ns)
	}
	p := "lockbridge:{" + ns + "}:"
	return Keys{
		NS:       ns,
		Phase:    p + "phase",
		Since:    p + "phase-since",
		Meta:     p + "namespace",
		Channel:  p + "phase-changed",
		Clients:  p + "clients",
		Expiry:   p + "clients-expiry",
		Seen:     p + "clients-seen",
		Fleet:    p + "fleet",
		Sighting: p + "legacy-sighting",
		Pending:  p + "init-pending",
		Mark:     "lockbridge-mark:{" + ns + "}",
	}, nil
}

// NoticeShards is how many channels the phase notices of protocol 3 go
// out on: a follower listens on one, chosen at random, and the controller
// publishes on each in its own call.
const NoticeShards = 64

// Shard is the name of notice channel i (0 ≤ i < NoticeShards).
func (k Keys) Shard(i int) string { return k.Channel + ":" + strconv.Itoa(i) }

// All returns every key of the namespace (not the channel, not the mark).
func (k Keys) All() []string {
	return []string{k.Phase, k.Since, k.Meta, k.Clients, k.Expiry, k.Seen, k.Fleet, k.Sighting, k.Pending}
}

// RemedyInit is the way out of a namespace that never had a phase.
func RemedyInit(ns string) string {
	return fmt.Sprintf("if the namespace is new, start it at legacy with `lockbridge phase init --namespace %s`; "+
		"if it ran before, its state was lost: `lockbridge phase repair --namespace %s --to PHASE`", ns, ns)
}

// RemedyRepair is the way out of a namespace whose phase is lost,
// unreadable or went back.
func RemedyRepair(ns string) string {
	return fmt.Sprintf("an operator restores it with `lockbridge phase repair --namespace %s --to PHASE` "+
		"(see `lockbridge fleet --namespace %s` for the phase the evidence shows)", ns, ns)
}

// Decimal reads a non-negative decimal; -1 when it is not one.
func Decimal(s string) int64 {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return -1
	}
	return n
}
