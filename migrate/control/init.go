package control

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/lockbridge/lockbridge/internal/protocol/migrateproto"
	"github.com/lockbridge/lockbridge/migrate"
)

// mark is a namespace's mark (MarkKey): the phase the controller last set
// there and the highest it ever set, by the server's clock. Every init,
// step and repair writes it with the phase, in one script, and Cleanup
// writes it at the end state; it is kept apart from the namespace's keys,
// so it outlives a flush of them.
type mark struct {
	phase, highest migrate.Phase
	// at is when the phase was set (the server's clock).
	at time.Time

	instance, gen int64
}

func parseMark(m map[string]string) mark {
	var k mark
	k.phase, _ = phaseOf(m["phase"])
	k.highest, _ = phaseOf(m["highest"])
	if ms, err := strconv.ParseInt(m["at"], 10, 64); err == nil && ms > 0 {
		k.at = time.UnixMilli(ms)
	}
	k.instance, k.gen = max(migrateproto.Decimal(m["init"]), 0), max(migrateproto.Decimal(m["gen"]), 0)
	return k
}

// sighted reports whether the reading holds a legacy sighting, readable or
// not: a dual-write or dual-read locker of this namespace ran.
func (sn snapshot) sighted() bool {
	return !sn.sighting.At.IsZero() || sn.sighting.Key != "" || sn.sighting.Count != 0 || len(sn.sightingErrs) > 0
}

// trace reports whether the entry shows that the namespace ran: any entry
// but a locker's that waits for the first phase (no instance read, legacy,
// nothing held) — an entry the controller cannot read included.
func (c Member) trace() bool {
	return c.Protocol < 2 || c.Invalid != nil || c.instance != 0 ||
		c.Phase != migrate.PhaseLegacy || (c.Next != 0 && c.Next != migrate.PhaseLegacy) || c.HeldNewest != 0
}

func noMark(ns string) Blocker {
	return Blocker{Kind: blockNoMark,
		Text: fmt.Sprintf("namespace %q has no mark, and in Redis Cluster its absence proves nothing: a restart of the "+
			"node that holds the namespace's slot, without persistence, takes the mark with the namespace's keys while locks "+
			"on other nodes live on (a plain modern lock at the end state heartbeats nothing). If the namespace is new (no "+
			"locker of it has ever run), start it with `lockbridge phase init --force --namespace %s`", ns, ns)}
}

func remedyRestore(ns string, m mark) string {
	return fmt.Sprintf("its mark shows the controller set %v last (at %s): `lockbridge phase init --namespace %s` "+
		"restores %v", m.phase, m.at.UTC().Format(time.RFC3339), ns, m.phase)
}

// Init gives a namespace without a phase its phase. Nothing that lockbridge
// cannot see is taken for a new namespace:
//
//   - When the namespace's mark (MarkKey) shows where the controller last
//     set the phase — the namespace ran, and its keys were deleted or lost
//     — Init restores that phase, as Repair to it would (the namespace's
//     instance kept, a newer generation, the quiet period restarted), and
//     refuses when anything shows a higher phase.
//   - When no mark exists but the namespace hash, registry entries or a
//     legacy sighting show that it ran, Init refuses with a
//     *PhaseUnknownError naming Repair.
//   - In Redis Cluster a namespace without a mark is refused
//     (blockNoMark): the node of its slot may have lost the mark with its
//     keys while locks on other nodes live on. Start a new one with force.
//   - When nothing shows it, Init starts it at PhaseLegacy once it has
//     stayed without a trace for the init silence (WithInitSilence) by the
//     server's clock, counted from the first Init call; it waits for that,
//     within ctx. A locker whose registry entry went with the namespace's
//     keys shows itself by heartbeating within that time, and a lock it
//     took ends within it. When ctx ends before the silence would,
//     Init returns at once an *UnsafeStepError saying how long is left.
//
// Every path refuses while the evidence may have been evicted (an
// allkeys-* policy, one it cannot read: blockEviction). With force Init
// starts the namespace at legacy at once whatever it finds, and logs what
// it overrode: a locker that still runs a later phase then locks beside
// lockers that read legacy.
//
// It returns ErrAlreadyInitialized (wrapped) when the namespace has a
// phase, and the step taken (From 0).
func (c *Controller) Init(ctx context.Context, force bool) (Step, error) {
	if err := c.usable(ctx); err != nil {
		return Step{}, err
	}
	for {
		step, left, err := c.initOnce(ctx, force)
		if err != nil || left <= 0 {
			return step, err
		}
		wait := &UnsafeStepError{Step: step, Blockers: []Blocker{{Kind: blockSilence,
			Text: fmt.Sprintf("the namespace must stay without a trace for %v by the server's clock before init starts it at "+
				"legacy: %v left (a locker whose registry entry was lost shows itself by heartbeating meanwhile)", c.silence,
				left.Round(time.Millisecond))}}}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < left {
			return step, wait
		}
		c.tel.Log().InfoContext(ctx, "lockbridge: migrate: init waits for the namespace's silence",
			"lockbridge.migrate.namespace", c.s.k.NS, "left", left)
		t := time.NewTimer(left)
		select {
		case <-ctx.Done():
			t.Stop()
			return step, fmt.Errorf("%w: %w", wait, ctx.Err())
		case <-t.C:
		}
	}
}

// initOnce is one attempt of Init: the step taken, or how long the silence
// has left.
func (c *Controller) initOnce(ctx context.Context, force bool) (Step, time.Duration, error) {
	sn, err := c.s.read(ctx, c.margin)
	if err != nil {
		return Step{}, 0, err
	}
	st := c.judge(sn)
	if st.PhaseProblem == nil {
		return Step{}, 0, fmt.Errorf("%w: namespace %q is at %v", ErrAlreadyInitialized, st.Namespace, st.Phase)
	}
	seen := ""
	if sn.hasPhase {
		seen = sn.phase
	}
	var evicted []Blocker
	for _, b := range st.Blockers {
		if b.Kind == blockEviction {
			evicted = append(evicted, b)
		}
	}
	ran := st.PhaseProblem.Reason != migrate.ReasonUninitialized || st.Evidence != 0
	switch {
	case st.mark.phase != 0 && !force:
		blockers, minGen, keep := c.repairPlan(sn, st, st.mark.phase)
		step, err := c.apply(ctx, Step{To: st.mark.phase}, blockers, false, seen, migrateproto.PhaseSetRepair, minGen, keep,
			judged{reading: c.reading(st)})
		return step, 0, err
	case ran && !force:
		p := *st.PhaseProblem
		p.Reason, p.Remedy = migrate.ReasonLost, migrateproto.RemedyRepair(st.Namespace)
		if st.Evidence != 0 {
			p.Cause = fmt.Errorf("the evidence shows the fleet reached %v", st.Evidence)
		}
		return Step{}, 0, &p
	case ran: // forced
		ranB := Blocker{Kind: blockRan, Phase: st.Evidence,
			Text: fmt.Sprintf("the namespace ran before (evidence: %v): lockers that still run a later phase lock beside "+
				"those that read legacy", phaseOrNone(st.Evidence))}
		blockers, minGen, keep := c.repairPlan(sn, st, migrate.PhaseLegacy)
		step, err := c.apply(ctx, Step{To: migrate.PhaseLegacy}, append([]Blocker{ranB}, blockers...), true, seen,
			migrateproto.PhaseSetRepair, minGen, keep, judged{reading: c.reading(st)})
		return step, 0, err
	case len(evicted) > 0 && !force:
		c.tel.Refused(ctx, st.Namespace, migrate.PhaseLegacy.String(), string(blockEviction))
		return Step{}, 0, &UnsafeStepError{Step: Step{To: migrate.PhaseLegacy}, Blockers: evicted}
	case c.s.c.Cluster() && !force:
		c.tel.Refused(ctx, st.Namespace, migrate.PhaseLegacy.String(), string(blockNoMark))
		return Step{}, 0, &UnsafeStepError{Step: Step{To: migrate.PhaseLegacy}, Blockers: []Blocker{noMark(st.Namespace)}}
	}
	return c.initEmpty(ctx, sn, evicted, force)
}

// initEmpty starts a namespace that shows no trace at legacy, once the
// silence has passed (or at once, forced).
func (c *Controller) initEmpty(ctx context.Context, sn snapshot, evicted []Blocker, force bool) (Step, time.Duration,
	error) {
	step, silence := Step{To: migrate.PhaseLegacy}, c.silence
	if force {
		silence = 0
		step.Overridden = evicted
		since, err := strconv.ParseInt(sn.pending, 10, 64)
		if age := sn.now.Sub(time.UnixMilli(since)); err != nil || age < c.silence {
			step.Overridden = append(step.Overridden, Blocker{Kind: blockSilence,
				Text: fmt.Sprintf("init forced before the namespace stayed without a trace for %v: a locker whose registry entry "+
					"was lost may still lock in a later phase", c.silence)})
		}
	}
	left, err := c.s.initPhase(ctx, migrate.PhaseLegacy, silence)
	switch {
	case errors.Is(err, errNotEmpty):
		return step, 0, &migrate.PhaseUnknownError{Namespace: c.s.k.NS, Reason: migrate.ReasonLost,
			Remedy: migrateproto.RemedyRepair(c.s.k.NS),
			Cause: errors.New("a trace of the namespace (its hash, mark, a registry entry or a sighting) appeared while init " +
				"waited")}
	case err != nil || left > 0:
		return step, left, err
	}
	_ = c.s.notify(ctx, migrate.PhaseLegacy) // best effort: waiting lockers read at every interval anyway
	lvl := slog.LevelInfo
	if len(step.Overridden) > 0 {
		lvl = slog.LevelWarn
	}
	c.tel.Stepped(ctx, c.s.k.NS, "none", migrate.PhaseLegacy.String())
	c.tel.Log().Log(ctx, lvl, "lockbridge: migrate: controller initialised the namespace", "lockbridge.migrate.namespace",
		c.s.k.NS,
		"lockbridge.migrate.phase", migrate.PhaseLegacy.String(), "overridden", len(step.Overridden))
	return step, 0, nil
}
