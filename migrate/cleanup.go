package migrate

import (
	"context"
	"fmt"
	"strconv"
	"time"
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

// CleanupRefusedError is a refused Cleanup: the reasons. It wraps
// ErrUnsafeStep.
type CleanupRefusedError struct {
	Namespace string
	Reasons   []string
}

func (e *CleanupRefusedError) Error() string {
	msg := fmt.Sprintf("migrate: refusing to clean up namespace %s:", e.Namespace)
	for _, r := range e.Reasons {
		msg += "\n  - " + r
	}
	return msg
}

func (e *CleanupRefusedError) Unwrap() error { return ErrUnsafeStep }

// Cleanup removes the controller's evidence once the migration has ended:
// the legacy sighting and the registry entries of dead clients. It acts
// only when the namespace is at PhaseModern, no step is pending (no
// blocker but "at-modern": every live client at modern, holding no lock
// of an older phase, no entry the controller cannot read) and the fleet
// has run modern for at least the quiet period by the server's clock —
// before that, these are the evidence a rollback is judged by. Otherwise
// it returns a *CleanupRefusedError (wrapping ErrUnsafeStep) and removes
// nothing. The removal is one script that checks again that the phase is
// modern and was not set since the reading, and removes the sighting only
// if it is the one read and older than the quiet period.
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
	out := Cleanup{Namespace: st.Namespace, Now: st.Now, Since: st.Since, DryRun: dryRun}
	if reasons := c.cleanupRefusals(st); len(reasons) > 0 {
		return out, &CleanupRefusedError{Namespace: st.Namespace, Reasons: reasons}
	}
	at := ""
	if s := st.Sighting; s.At.IsZero() && (s.Count != 0 || s.Key != "") {
		out.SightingKept = "its time (field at) is missing or unreadable: read it with HGETALL " + c.s.k.sighting
	} else if !s.At.IsZero() {
		if age := st.Now.Sub(s.At); age < c.quiet {
			out.SightingKept = fmt.Sprintf("recorded %v ago, less than the quiet period %v", max(age, 0).Round(time.Second), c.quiet)
		} else {
			at = strconv.FormatInt(s.At.UnixMilli(), 10)
			out.Sighting = s
		}
	}
	if dryRun {
		for _, m := range st.Members {
			if m.Protocol >= 2 && m.Invalid == nil && !m.Live {
				out.Forgotten = append(out.Forgotten, m.ID)
			}
		}
		return out, nil
	}
	k := c.s.k
	r, err := c.s.c.Eval(ctx, cleanupScript, []string{k.phase, k.since, k.clients, k.expiry, k.seen, k.sighting, k.meta, k.mark},
		strconv.FormatInt(st.Since.UnixMilli(), 10), ms(c.quiet), ms(c.margin), at)
	if err != nil {
		return out, fmt.Errorf("migrate: clean up namespace %s: %w", st.Namespace, err)
	}
	a, ok := r.([]any)
	if !ok || len(a) < 2 {
		return out, fmt.Errorf("migrate: clean up namespace %s: unexpected reply %v", st.Namespace, r)
	}
	code, _ := a[0].(int64)
	switch code {
	case 1:
	case -1:
		return out, &CleanupRefusedError{Namespace: st.Namespace, Reasons: []string{"the phase is no longer modern"}}
	case -2:
		return out, &CleanupRefusedError{Namespace: st.Namespace, Reasons: []string{"the phase was set meanwhile: read the fleet again"}}
	case -3:
		return out, &CleanupRefusedError{Namespace: st.Namespace, Reasons: []string{fmt.Sprintf("the quiet period %v has not passed since the fleet reached modern", c.quiet)}}
	default:
		return out, fmt.Errorf("migrate: clean up namespace %s: unexpected reply %v", st.Namespace, r)
	}
	if n, _ := a[1].(int64); n != 1 && at != "" {
		out.Sighting = Sighting{}
		out.SightingKept = "a newer sighting was recorded meanwhile"
	}
	for _, id := range a[2:] {
		if s, ok := id.(string); ok {
			out.Forgotten = append(out.Forgotten, s)
		}
	}
	return out, nil
}

// cleanupRefusals are the reasons Cleanup refuses on status st.
func (c *Controller) cleanupRefusals(st Status) []string {
	var r []string
	switch {
	case st.PhaseProblem != nil:
		r = append(r, "the phase is unknown: "+st.PhaseProblem.Error())
	case st.Phase != PhaseModern:
		r = append(r, fmt.Sprintf("the namespace is at %v, not modern: the evidence is still needed to judge the steps", st.Phase))
	}
	for _, b := range st.Blockers {
		if b.Kind != BlockAtModern && b.Kind != BlockPhaseUnknown {
			r = append(r, "a step is still rolling out: "+b.Text)
		}
	}
	if st.PhaseProblem == nil && st.Phase == PhaseModern {
		switch ran := st.Now.Sub(st.Since); {
		case st.Since.IsZero():
			r = append(r, "when the fleet reached modern is unknown (no phase-since)")
		case ran < c.quiet:
			r = append(r, fmt.Sprintf("the fleet has run modern for %v, less than the quiet period %v", max(ran, 0).Round(time.Second), c.quiet))
		}
	}
	return r
}

func ms(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }
