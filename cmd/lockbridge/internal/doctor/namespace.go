package doctor

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/lockbridge/lockbridge/migrate"
	"github.com/lockbridge/lockbridge/migrate/control"
)

// checkNamespace reads a migration namespace as the controller reads it
// (control.Controller.Status) and flags what lets two holders in: live
// clients in phases that do not exclude each other, and a legacy-only
// locker seen after the fleet moved past dual-write.
func checkNamespace(ctx context.Context, r *run) (Finding, bool) {
	if r.cfg.ns == "" {
		return Finding{}, false
	}
	f := Finding{ID: IDNamespace}
	ctl, err := control.New(r.t.Client, r.cfg.ns)
	if err != nil {
		f.Severity, f.Summary = Unknown, errText(err)
		return f, true
	}
	cctx, cancel := context.WithTimeout(ctx, r.cfg.timeout)
	defer cancel()
	st, err := ctl.Status(cctx)
	if err != nil {
		if denied(err) || transport(err) {
			f.Severity = Unknown
			f.Summary = fmt.Sprintf("could not read namespace %q: %s", r.cfg.ns, errText(err))
			f.Fix = "run doctor as a user allowed GET and HGETALL on the namespace's keys"
			return f, true
		}
		f.Severity = Danger
		f.Summary = fmt.Sprintf("namespace %q cannot be read as lockbridge reads it: %s", r.cfg.ns, errText(err))
		f.Detail = "Lockers and the controller fail on the same read: no phase step can be judged."
		f.Fix = "see 'lockbridge fleet' and 'lockbridge phase' for the namespace, and repair its keys"
		return f, true
	}
	return namespaceFinding(st, r.cfg.now()), true
}

// namespaceFinding judges a namespace's status: danger when its phase
// cannot be known, when live clients run phases that do not exclude each
// other, or when a legacy-only locker was seen after dual-write; a warning
// when it was never started.
func namespaceFinding(st control.Status, _ time.Time) Finding {
	if st.PhaseProblem != nil {
		return phaseProblemFinding(st)
	}
	f := Finding{ID: IDNamespace}
	since := ""
	if !st.Since.IsZero() {
		since = fmt.Sprintf(" since %s", st.Since.UTC().Format(time.RFC3339))
	}
	lines := []string{fmt.Sprintf("phase %v%s", st.Phase, since)}
	lp := livePhasesOf(st)
	lines = append(lines, fmt.Sprintf("live clients: %s; %d dead entries", strings.Join(lp.counts, ", "), lp.dead))
	dangers := lp.dangers()
	if st.Sighting.At.IsZero() {
		lines = append(lines, "legacy sighting: none recorded")
	} else {
		lines = append(lines, fmt.Sprintf("legacy sighting: %s on key %q (%d in all)",
			st.Sighting.At.UTC().Format(time.RFC3339), st.Sighting.Key, st.Sighting.Count))
		if st.Phase >= migrate.PhaseDualRead && !st.Since.IsZero() && st.Sighting.At.After(st.Since) {
			dangers = append(dangers, fmt.Sprintf("a legacy-only locker was seen at %s on key %q, after the fleet "+
				"moved to %v: it locks without seeing the modern keys",
				st.Sighting.At.UTC().Format(time.RFC3339), st.Sighting.Key, st.Phase))
		}
	}
	switch next, hasNext := st.Phase.Next(); {
	case !hasNext:
		lines = append(lines, "next step: none (modern)")
	case st.Safe():
		lines = append(lines, fmt.Sprintf("next step %v → %v: safe now", st.Phase, next))
	default:
		lines = append(lines, fmt.Sprintf("next step %v → %v: blocked — %s", st.Phase, next, blockerText(st.Blockers)))
	}
	f.Detail = strings.Join(lines, "\n")
	if len(dangers) > 0 {
		f.Severity = Danger
		f.Summary = fmt.Sprintf("namespace %q: %s", st.Namespace, dangers[0])
		f.Detail = strings.Join(dangers, "\n") + "\n" + f.Detail
		f.Fix = "roll the fleet back to a phase every live client's phase excludes ('lockbridge phase set'), " +
			"and retire or upgrade the lagging clients ('lockbridge fleet' lists them)"
		return f
	}
	f.Severity = OK
	f.Summary = fmt.Sprintf("namespace %q at %v, live clients %s", st.Namespace, st.Phase, strings.Join(lp.counts, ", "))
	return f
}

// phaseProblemFinding judges a namespace whose phase cannot be known: a
// warning when it was never started (lockers refuse until phase init),
// otherwise danger (lockers that follow it fail closed: no overlap, but no
// locks either).
func phaseProblemFinding(st control.Status) Finding {
	f := Finding{ID: IDNamespace}
	pe := st.PhaseProblem
	if neverRan(st) {
		f.Severity = Warn
		f.Summary = fmt.Sprintf("namespace %q not initialised: lockers that follow it refuse to lock until "+
			"`lockbridge phase init --namespace %s`", st.Namespace, st.Namespace)
		f.Detail = "It shows no trace of a fleet (no phase, mark, registry entry or legacy sighting): " +
			"a namespace not started yet. phase init starts it at legacy once it has shown no trace for --silence " +
			"(2m by default) by the server's clock."
		f.Fix = fmt.Sprintf("lockbridge phase init --namespace %s", st.Namespace)
		return f
	}
	f.Severity = Danger
	why := fmt.Sprint(pe.Reason)
	if pe.Cause != nil {
		why += " (" + pe.Cause.Error() + ")"
	}
	f.Summary = fmt.Sprintf("namespace %q: %s: lockers that follow it refuse to lock", st.Namespace, why)
	if st.Evidence != 0 {
		f.Detail = fmt.Sprintf("the evidence shows the fleet reached %v", st.Evidence)
	}
	f.Fix = pe.Remedy
	return f
}

// livePhases are the phases in use in a namespace: the fleet's, and each
// live client's and those of the locks it holds.
type livePhases struct {
	live   map[migrate.Phase][]string // live client IDs by phase
	phases []migrate.Phase            // the fleet's phase and every live one, in order
	counts []string                   // "2 at dual-write", …, or "none"
	dead   int                        // dead registry entries
}

func livePhasesOf(st control.Status) livePhases {
	lp := livePhases{live: map[migrate.Phase][]string{}}
	for _, c := range st.Members {
		if c.Live {
			for _, p := range c.Phases() { // its phase and those of the locks it holds
				lp.live[p] = append(lp.live[p], c.ID)
			}
		} else {
			lp.dead++
		}
	}
	lp.phases = []migrate.Phase{st.Phase}
	for p := range lp.live {
		if p != st.Phase {
			lp.phases = append(lp.phases, p)
		}
	}
	sort.Slice(lp.phases, func(i, j int) bool { return lp.phases[i] < lp.phases[j] })
	for _, p := range lp.phases {
		if n := len(lp.live[p]); n > 0 {
			lp.counts = append(lp.counts, fmt.Sprintf("%d at %v", n, p))
		}
	}
	if len(lp.counts) == 0 {
		lp.counts = []string{"none"}
	}
	return lp
}

// dangers are the pairs of phases in use that do not exclude each other
// (every pair must, and each must exclude the fleet's phase).
func (lp livePhases) dangers() []string {
	var dangers []string
	for i, a := range lp.phases {
		for _, b := range lp.phases[i+1:] {
			if !migrate.Compatible(a, b) {
				dangers = append(dangers, fmt.Sprintf("live clients run %v and %v, which do not exclude each other (%s)",
					a, b, clientList(lp.live, a, b)))
			}
		}
	}
	return dangers
}

func clientList(live map[migrate.Phase][]string, a, b migrate.Phase) string {
	var s []string
	for _, p := range []migrate.Phase{a, b} {
		var ids []string
		for i, id := range live[p] {
			if i == 3 {
				ids = append(ids, "…")
				break
			}
			ids = append(ids, strconv.Quote(id))
		}
		if len(ids) > 0 {
			s = append(s, fmt.Sprintf("%v: %s", p, strings.Join(ids, ", ")))
		}
	}
	if len(s) == 0 {
		return "the fleet's phase"
	}
	return strings.Join(s, "; ")
}

func blockerText(bs []control.Blocker) string {
	s := make([]string, len(bs))
	for i, b := range bs {
		s[i] = b.Text
	}
	return strings.Join(s, "; ")
}

// neverRan reports a namespace that was never initialised and shows no
// trace of a fleet: nothing was lost, it was not started.
func neverRan(st control.Status) bool {
	return st.PhaseProblem.Reason == migrate.ReasonUninitialized && st.Evidence == 0 &&
		len(st.Members) == 0 && st.Sighting.At.IsZero() && st.Sighting.Count == 0
}
