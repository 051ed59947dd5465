package control

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/lockbridge/lockbridge/internal/protocol/migrateproto"
	"github.com/lockbridge/lockbridge/migrate"
)

// Cleanup is what Controller.Cleanup removed from the namespace — or, for
// a dry run, would remove.
type Cleanup struct {
	Namespace string
	// Now is the server's time of the reading; Since when the namespace
	// reached modern, by the server's clock.
	Now, Since time.Time
	DryRun     bool
	// Sighting is the legacy sighting removed (zero when none was, see
	// SightingKept).
	Sighting Sighting
	// SightingKept says why a recorded sighting stays ("" when none was
	// recorded or it was removed).
	SightingKept string
	// Forgotten are the ids of the registry entries removed: those dead by
	// the server's clock, their expiry plus the liveness margin passed.
	// Live entries stay: a running locker's entry is its heartbeat.
	Forgotten []string
}

// cleanupRefusedError is a refused Cleanup: the reasons. It wraps
// ErrUnsafeStep.
type cleanupRefusedError struct {
	Namespace string
	Reasons   []string
}

func (e *cleanupRefusedError) Error() string {
	msg := fmt.Sprintf("migrate: refusing to clean up namespace %s:", e.Namespace)
	for _, r := range e.Reasons {
		msg += "\n  - " + r
	}
	return msg
}

func (e *cleanupRefusedError) Unwrap() error { return ErrUnsafeStep }

// Cleanup removes the controller's evidence once the migration has ended:
// the legacy sighting and the registry entries of dead clients. It acts
// only when the namespace is at PhaseModern, no step is pending (no
// blocker but "at-modern": every live client at modern, holding no lock
// of an older phase, no entry the controller cannot read) and the fleet
// has run modern for at least the quiet period by the server's clock —
// before that, these are the evidence a rollback is judged by. Otherwise
// it returns a *cleanupRefusedError (wrapping ErrUnsafeStep) and removes
// nothing. The removal is one script that checks again that the phase is
// modern and was not set since the reading, on a server with the
// replication id the reading was judged by (no failover or restart
// since), and removes the sighting only if it is the one read and older
// than the quiet period.
//
// With dryRun it reads and judges the same way and returns what it would
// remove, removing nothing. Done, it writes the namespace's mark (MarkKey)
// at modern, for a namespace that reached modern before marks existed.
// Leftover legacy keys are not the namespace's:
// `lockbridge fleet cleanup --key` removes those.
func (c *Controller) Cleanup(ctx context.Context, dryRun bool) (Cleanup, error) {
	if err := c.usable(ctx); err != nil {
		return Cleanup{}, err
	}
	st, err := c.Status(ctx)
	if err != nil {
		return Cleanup{}, err
	}
	if st.moved && !dryRun && st.PhaseProblem == nil {
		// A failover or a restart since the last set: recorded as a
		// restore, whose blockers then refuse the cleanup for a while.
		if err := c.s.recordHistory(ctx, st.Phase, st.replid); err != nil {
			return Cleanup{}, err
		}
		if st, err = c.Status(ctx); err != nil {
			return Cleanup{}, err
		}
	}
	out := Cleanup{Namespace: st.Namespace, Now: st.Now, Since: st.Since, DryRun: dryRun}
	if reasons := c.cleanupRefusals(st); len(reasons) > 0 {
		return out, &cleanupRefusedError{Namespace: st.Namespace, Reasons: reasons}
	}
	at := c.cleanupSighting(st, &out)
	if dryRun {
		for _, m := range st.Members {
			if m.Protocol >= 2 && m.Invalid == nil && !m.Live {
				out.Forgotten = append(out.Forgotten, m.ID)
			}
		}
		return out, nil
	}
	a := migrateproto.CleanupArgs{NS: c.s.k, Since: st.Since, Quiet: c.quiet, Margin: c.margin, SightingAt: at,
		Replid: st.replid}
	r, err := c.s.c.Eval(ctx, migrateproto.CleanupScript, a.Keys(), a.Argv()...)
	if err != nil {
		return out, fmt.Errorf("migrate: clean up namespace %s: %w", st.Namespace, err)
	}
	err = c.cleanupDone(&out, r, at != "")
	return out, err
}

// cleanupSighting decides whether Cleanup removes the sighting of st: it
// returns its "at" to send (Unix ms), or "" and why it is kept in out.
func (c *Controller) cleanupSighting(st Status, out *Cleanup) (at string) {
	s := st.Sighting
	switch {
	case s.At.IsZero() && (s.Count != 0 || s.Key != ""):
		out.SightingKept = "its time (field at) is missing or unreadable: read it with HGETALL " + c.s.k.Sighting
	case s.At.IsZero():
	case st.Now.Sub(s.At) < c.quiet:
		out.SightingKept = fmt.Sprintf("recorded %v ago, less than the quiet period %v",
			max(st.Now.Sub(s.At), 0).Round(time.Second), c.quiet)
	default:
		out.Sighting = s
		return strconv.FormatInt(s.At.UnixMilli(), 10)
	}
	return ""
}

// cleanupDone reads cleanup.lua's reply r into out; sent says the sighting
// was to go.
func (c *Controller) cleanupDone(out *Cleanup, r any, sent bool) error {
	refused := func(why string) error {
		return &cleanupRefusedError{Namespace: out.Namespace, Reasons: []string{why}}
	}
	reply, ok := r.([]any)
	if !ok || len(reply) < 2 {
		return fmt.Errorf("migrate: clean up namespace %s: unexpected reply %v", out.Namespace, r)
	}
	code, _ := reply[0].(int64)
	switch code {
	case migrateproto.CleanupDone:
	case migrateproto.CleanupNotModern:
		return refused("the phase is no longer modern")
	case migrateproto.CleanupPhaseMoved:
		return refused("the phase was set meanwhile: read the fleet again")
	case migrateproto.CleanupQuiet:
		return refused(fmt.Sprintf("the quiet period %v has not passed since the fleet reached modern", c.quiet))
	case migrateproto.CleanupHistoryChanged:
		return refused("the server's replication id changed since the reading (a failover or a restart): the evidence " +
			"read may be missing there; run cleanup again, which records the change and waits as after a restore")
	default:
		return fmt.Errorf("migrate: clean up namespace %s: unexpected reply %v", out.Namespace, r)
	}
	if n, _ := reply[1].(int64); n != migrateproto.CleanupSightingDeleted && sent {
		out.Sighting = Sighting{}
		out.SightingKept = "a newer sighting was recorded meanwhile"
	}
	for _, id := range reply[2:] {
		if s, ok := id.(string); ok {
			out.Forgotten = append(out.Forgotten, s)
		}
	}
	return nil
}

// cleanupRefusals are the reasons Cleanup refuses on status st.
func (c *Controller) cleanupRefusals(st Status) []string {
	var r []string
	switch {
	case st.PhaseProblem != nil:
		r = append(r, "the phase is unknown: "+st.PhaseProblem.Error())
	case st.Phase != migrate.PhaseModern:
		r = append(r, fmt.Sprintf("the namespace is at %v, not modern: the evidence is still needed to judge the steps",
			st.Phase))
	}
	for _, b := range st.Blockers {
		if b.Kind != blockAtModern && b.Kind != blockPhaseUnknown {
			r = append(r, "a step is still rolling out: "+b.Text)
		}
	}
	if st.PhaseProblem == nil && st.Phase == migrate.PhaseModern {
		switch ran := st.Now.Sub(st.Since); {
		case st.Since.IsZero():
			r = append(r, "when the fleet reached modern is unknown (no phase-since)")
		case ran < c.quiet:
			r = append(r, fmt.Sprintf("the fleet has run modern for %v, less than the quiet period %v", max(ran,
				0).Round(time.Second), c.quiet))
		}
	}
	return r
}
