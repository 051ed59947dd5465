package doctor

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/lockbridge/lockbridge/migrate"
)

// checkNamespace reads a migration namespace as the controller reads it
// (migrate.Controller.Status) and flags what lets two holders in: live
// clients in phases that do not exclude each other, and a legacy-only
// locker seen after the fleet moved past dual-write.
func checkNamespace(ctx context.Context, r *run) (Finding, bool) {
	if r.cfg.ns == "" {
		return Finding{}, false
	}
	f := Finding{ID: IDNamespace}
	ctl, err := migrate.NewController(r.t.Client, r.cfg.ns)
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

func namespaceFinding(st migrate.Status, now time.Time) Finding {
	f := Finding{ID: IDNamespace}
	if pe := st.PhaseProblem; pe != nil && neverRan(st) {
		// A namespace not started yet: the state before 'phase init', not
		// a danger. Its lockers refuse to lock until then.
		f.Severity = Warn
		f.Summary = fmt.Sprintf("namespace %q not initialised: lockers that follow it refuse to lock until `lockbridge phase init --namespace %s`", st.Namespace, st.Namespace)
		f.Detail = "It shows no trace of a fleet (no phase, mark, registry entry or legacy sighting): a namespace not started yet. " +
			"phase init starts it at legacy once it has shown no trace for --silence (2m by default) by the server's clock."
		f.Fix = fmt.Sprintf("lockbridge phase init --namespace %s", st.Namespace)
		return f
	}
	if pe := st.PhaseProblem; pe != nil {
		// Lockers following this namespace refuse to lock (they fail
		// closed): no overlap, but no locks either.
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
	var lines, dangers []string
	since := ""
	if !st.Since.IsZero() {
		since = fmt.Sprintf(" since %s", st.Since.UTC().Format(time.RFC3339))
	}
	lines = append(lines, fmt.Sprintf("phase %v%s", st.Phase, since))

	// Live clients by phase; every pair of phases in use must exclude each
	// other, and each must exclude the fleet's phase.
	live := map[migrate.Phase][]string{}
	dead := 0
	for _, c := range st.Members {
		if c.Live {
			for _, p := range c.Phases() { // its phase and those of the locks it holds
				live[p] = append(live[p], c.ID)
			}
		} else {
			dead++
		}
	}
	phases := []migrate.Phase{st.Phase}
	for p := range live {
		if p != st.Phase {
			phases = append(phases, p)
		}
	}
	sort.Slice(phases, func(i, j int) bool { return phases[i] < phases[j] })
	var counts []string
	for _, p := range phases {
		if n := len(live[p]); n > 0 {
			counts = append(counts, fmt.Sprintf("%d at %v", n, p))
		}
	}
	if len(counts) == 0 {
		counts = []string{"none"}
	}
	lines = append(lines, fmt.Sprintf("live clients: %s; %d dead entries", strings.Join(counts, ", "), dead))
	for i, a := range phases {
		for _, b := range phases[i+1:] {
			if !migrate.Compatible(a, b) {
				dangers = append(dangers, fmt.Sprintf("live clients run %v and %v, which do not exclude each other (%s)", a, b, clientList(live, a, b)))
			}
		}
	}

	if st.Sighting.At.IsZero() {
		lines = append(lines, "legacy sighting: none recorded")
	} else {
		lines = append(lines, fmt.Sprintf("legacy sighting: %s on key %q (%d in all)", st.Sighting.At.UTC().Format(time.RFC3339), st.Sighting.Key, st.Sighting.Count))
		if st.Phase >= migrate.PhaseDualRead && !st.Since.IsZero() && st.Sighting.At.After(st.Since) {
			dangers = append(dangers, fmt.Sprintf("a legacy-only locker was seen at %s on key %q, after the fleet moved to %v: it locks without seeing the modern keys",
				st.Sighting.At.UTC().Format(time.RFC3339), st.Sighting.Key, st.Phase))
		}
	}
	switch {
	case !st.HasNext:
		lines = append(lines, "next step: none (modern)")
	case st.Safe():
		lines = append(lines, fmt.Sprintf("next step %v → %v: safe now", st.Phase, st.Next))
	default:
		lines = append(lines, fmt.Sprintf("next step %v → %v: blocked — %s", st.Phase, st.Next, blockerText(st.Blockers)))
	}
	f.Detail = strings.Join(lines, "\n")
	if len(dangers) > 0 {
		f.Severity = Danger
		f.Summary = fmt.Sprintf("namespace %q: %s", st.Namespace, dangers[0])
		f.Detail = strings.Join(dangers, "\n") + "\n" + f.Detail
		f.Fix = "roll the fleet back to a phase every live client's phase excludes ('lockbridge phase set'), and retire or upgrade the lagging clients ('lockbridge fleet' lists them)"
		return f
	}
	f.Severity = OK
	f.Summary = fmt.Sprintf("namespace %q at %v, live clients %s", st.Namespace, st.Phase, strings.Join(counts, ", "))
	return f
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

func blockerText(bs []migrate.Blocker) string {
	s := make([]string, len(bs))
	for i, b := range bs {
		s[i] = b.Text
	}
	return strings.Join(s, "; ")
}

// neverRan reports a namespace that was never initialised and shows no
// trace of a fleet: nothing was lost, it was not started.
func neverRan(st migrate.Status) bool {
	return st.PhaseProblem.Reason == migrate.ReasonUninitialized && st.Evidence == 0 &&
		len(st.Members) == 0 && st.Sighting.At.IsZero() && st.Sighting.Count == 0
}
