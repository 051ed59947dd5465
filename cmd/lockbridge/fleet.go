package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/lockbridge/lockbridge/migrate"
)

func runFleet(e *env, args []string) error {
	fs := newFlags(e, "fleet", "[flags] [forget ID]", `List the namespace's clients (phase, held locks, last heartbeat, by the server's
clock), the last legacy sighting, and whether the next phase step is safe.
forget ID: remove a client known dead from the registry (refused while its
entry is live by the server's clock, unless --force).`)
	var cf connFlags
	cf.register(fs.FlagSet, false)
	quiet := fs.Duration("quiet", migrate.DefaultQuietPeriod, "quiet period used to judge the next step")
	force := fs.Bool("force", false, "forget: remove the entry even while it is live")
	if err := parse(fs, args); err != nil {
		return err
	}
	forget := ""
	switch {
	case fs.NArg() == 0:
	case fs.NArg() == 2 && fs.Arg(0) == "forget":
		forget = fs.Arg(1)
	default:
		return usageErrorf("fleet takes no arguments, or forget ID")
	}
	ctx := context.Background()
	c, closeFn, err := cf.dial(ctx, e)
	if err != nil {
		return err
	}
	defer closeFn()
	ctl, err := migrate.NewController(c, cf.ns(e), migrate.WithQuietPeriod(*quiet))
	if err != nil {
		return usageErrorf("%v", err)
	}
	cctx, cancel := cf.callCtx(ctx)
	defer cancel()
	if forget != "" {
		ok, err := ctl.Forget(cctx, forget, *force)
		switch {
		case errors.Is(err, migrate.ErrUnsafeStep):
			return &exitErr{exitUnsafe, fmt.Errorf("%w\n(re-run with --force if you know it is dead)", err)}
		case err != nil:
			return err
		case !ok:
			return fmt.Errorf("no client %s in the registry of namespace %s", printable(forget), printable(cf.ns(e)))
		}
		fmt.Fprintf(e.stdout, "forgot client %s\n", printable(forget))
		return nil
	}
	st, err := ctl.Status(cctx)
	if err != nil {
		return err
	}
	printStatus(e, st)
	return nil
}

// agoServer is how long before the server's now t was, for display.
func agoServer(now, t time.Time) string {
	if t.IsZero() {
		return "?"
	}
	return now.Sub(t).Round(time.Millisecond).String() + " ago"
}

func printStatus(e *env, st migrate.Status) {
	now := st.Now
	if st.PhaseProblem != nil {
		fmt.Fprintf(e.stdout, "namespace %s: phase UNKNOWN (%s)", printable(st.Namespace), st.PhaseProblem.Reason)
	} else {
		fmt.Fprintf(e.stdout, "namespace %s: phase %v", printable(st.Namespace), st.Phase)
		if !st.Since.IsZero() {
			fmt.Fprintf(e.stdout, " since %s (%s)", st.Since.UTC().Format(time.RFC3339), agoServer(now, st.Since))
		}
	}
	fmt.Fprintf(e.stdout, "; protocol %d", st.Protocol)
	if st.Evidence != 0 {
		fmt.Fprintf(e.stdout, "; evidence shows %v", st.Evidence)
	}
	fmt.Fprintln(e.stdout)
	w := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "CLIENT\tHOST\tPID\tPHASE\tHOLDS\tLAST HEARTBEAT\tSTATE")
	for _, c := range st.Members {
		state := "live"
		switch {
		case c.Invalid != nil:
			state = "UNREADABLE: " + message(c.Invalid)
		case c.Protocol != migrate.ProtocolVersion:
			state = fmt.Sprintf("protocol %d: cannot judge", c.Protocol)
		case !c.Live:
			state = "dead"
		}
		holds := "-"
		if c.HeldOldest != 0 {
			holds = c.HeldOldest.String()
			if c.HeldNewest != c.HeldOldest {
				holds += ".." + c.HeldNewest.String()
			}
		}
		phase := "?"
		if c.Phase != 0 {
			phase = c.Phase.String()
		}
		if c.Next != 0 {
			phase += "->" + c.Next.String()
		}
		seen := agoServer(now, c.Seen)
		if c.Protocol != migrate.ProtocolVersion {
			seen = "? (client clock)"
		}
		fmt.Fprintf(w, "%s\t%s\t%d\t%s\t%s\t%s\t%s\n", printable(c.ID), printable(c.Host), c.PID, phase, holds, seen, printable(state))
	}
	_ = w.Flush()
	if len(st.Members) == 0 {
		fmt.Fprintln(e.stdout, "(no clients registered)")
	}
	if st.Sighting.At.IsZero() {
		fmt.Fprintln(e.stdout, "legacy sighting: none recorded")
	} else {
		fmt.Fprintf(e.stdout, "legacy sighting: %s on key %q (%d in all)\n", agoServer(now, st.Sighting.At), st.Sighting.Key, st.Sighting.Count)
	}
	switch {
	case st.PhaseProblem != nil:
		fmt.Fprintf(e.stdout, "next step: none: %s\n", message(st.PhaseProblem))
	case !st.HasNext && len(st.Blockers) <= 1:
		fmt.Fprintln(e.stdout, "next step: none, the fleet is at modern")
	case st.Safe():
		fmt.Fprintf(e.stdout, "next step: %v → %v is safe\n", st.Phase, st.Next)
	default:
		if st.HasNext {
			fmt.Fprintf(e.stdout, "next step: %v → %v is NOT safe:\n", st.Phase, st.Next)
		} else {
			fmt.Fprintln(e.stdout, "next step: none, the fleet is at modern; blockers of any step:")
		}
		for _, b := range st.Blockers {
			fmt.Fprintf(e.stdout, "  - %s\n", printable(b.Text))
		}
	}
}

// printable is s as it is when it holds only printable characters, quoted
// (escapes visible, never interpreted by the terminal) otherwise: registry
// entries are written by whoever can write to Redis.
func printable(s string) string {
	for _, r := range s {
		if !strconv.IsPrint(r) {
			return strconv.Quote(s)
		}
	}
	return s
}
