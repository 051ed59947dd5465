package migrate

import (
	"fmt"
	"strings"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/internal/protocol/migrateproto"
)

// Phase is a step of the migration from the legacy lock to the modern one.
// Each phase writes and reads a set of keys (see docs/migration.md); two
// lockers in neighbouring phases always exclude each other.
type Phase int

// The four phases, in order. The zero Phase is not a phase.
const (
	// PhaseLegacy writes and reads only the legacy key, like the Java fleet.
	PhaseLegacy Phase = iota + 1
	// PhaseDualWrite writes both keys in one script and reads both.
	PhaseDualWrite
	// PhaseDualRead writes only the modern key and still reads both.
	PhaseDualRead
	// PhaseModern writes and reads only the modern key.
	PhaseModern
)

var phaseNames = migrateproto.PhaseNames

// String returns the phase's name: "legacy", "dual-write", "dual-read" or
// "modern", as stored in Redis and accepted by ParsePhase.
func (p Phase) String() string {
	if p.Valid() {
		return phaseNames[p]
	}
	return fmt.Sprintf("phase(%d)", int(p))
}

// Valid reports whether p is one of the four phases.
func (p Phase) Valid() bool { return p >= PhaseLegacy && p <= PhaseModern }

// Next returns the phase after p, and false at PhaseModern.
func (p Phase) Next() (Phase, bool) {
	if !p.Valid() || p == PhaseModern {
		return p, false
	}
	return p + 1, true
}

// Prev returns the phase before p, and false at PhaseLegacy.
func (p Phase) Prev() (Phase, bool) {
	if !p.Valid() || p == PhaseLegacy {
		return p, false
	}
	return p - 1, true
}

// writesLegacy reports whether lockers in p write the legacy key.
func (p Phase) writesLegacy() bool { return p == PhaseLegacy || p == PhaseDualWrite }

// writesModern reports whether lockers in p write the modern key.
func (p Phase) writesModern() bool { return p >= PhaseDualWrite }

// readsLegacy reports whether lockers in p need the legacy key free.
func (p Phase) readsLegacy() bool { return p <= PhaseDualRead }

// readsModern reports whether lockers in p need the modern key free.
func (p Phase) readsModern() bool { return p >= PhaseDualWrite }

// ParsePhase reads a phase name as String writes it; case, '-', '_' and
// spaces are ignored ("DualWrite", "dual_write" and "dual-write" are one).
func ParsePhase(s string) (Phase, error) {
	norm := strings.NewReplacer("-", "", "_", "", " ", "").Replace(strings.ToLower(strings.TrimSpace(s)))
	for p := PhaseLegacy; p <= PhaseModern; p++ {
		if strings.ReplaceAll(phaseNames[p], "-", "") == norm {
			return p, nil
		}
	}
	return 0, fmt.Errorf("migrate: %w: unknown phase %q (want legacy, dual-write, dual-read or modern)",
		lockbridge.ErrInvalid, s)
}

// MarshalText implements encoding.TextMarshaler.
func (p Phase) MarshalText() ([]byte, error) {
	if !p.Valid() {
		return nil, fmt.Errorf("migrate: %w: %v", lockbridge.ErrInvalid, p)
	}
	return []byte(p.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (p *Phase) UnmarshalText(b []byte) error {
	q, err := ParsePhase(string(b))
	if err != nil {
		return err
	}
	*p = q
	return nil
}

// Compatible reports whether lockers in phases a and b exclude each other:
// the same or neighbouring phases, or DualWrite with Modern. The unsafe
// pairs are Legacy beside DualRead or Modern: those holders write nothing
// a Legacy locker reads.
func Compatible(a, b Phase) bool {
	if !a.Valid() || !b.Valid() {
		return false
	}
	// b reads what a writes, and a reads what b writes.
	return overlap(a, b) && overlap(b, a)
}

// overlap reports whether a holder in phase w writes a key that a locker in
// phase r reads.
func overlap(w, r Phase) bool {
	return (w.writesLegacy() && r.readsLegacy()) || (w.writesModern() && r.readsModern())
}

// phaseName accepts a phase exactly as stored.
func phaseName(s string) (Phase, error) {
	p, err := migrateproto.PhaseByName(s)
	return Phase(p), err
}
