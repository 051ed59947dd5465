package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/lockbridge/lockbridge/migrate/control"
	"github.com/spf13/cobra"
)

const fleetSummary = `List the namespace's clients (phase, held locks, last heartbeat, by the server's
clock), the last legacy sighting, and whether the next phase step is safe.

--watch redraws it every --interval until Ctrl-C: on a terminal in place, else
one report after the other (with --output json, one JSON document a line).

forget ID: remove a client known dead from the registry (see 'lockbridge
fleet forget --help').

cleanup: once the fleet has run modern for the quiet period, remove the
legacy sighting, dead registry entries and expired legacy keys (see
'lockbridge fleet cleanup --help').

Exit codes: 0 the next step is safe (or the fleet is at modern), 4 the next
step is not safe or the phase is unknown, 1 an error, 2 bad usage, 130
interrupted (--watch ends so).`

const forgetLong = `Remove the client ID, known dead, from the namespace's registry (the ID is the
CLIENT column of 'lockbridge fleet'). Refused while its entry is live by the
server's clock, unless --force: a live client's entry is its heartbeat, and
forgetting it lets a step be judged without it.

Exit codes: 0 forgotten, 4 refused (the entry is live), 1 an error (no such
client), 2 bad usage.`

func newFleetCmd(e *env, g *globalFlags) *cobra.Command {
	var (
		quiet    time.Duration
		watch    bool
		interval time.Duration
	)
	cmd := &cobra.Command{
		Use:   "fleet",
		Short: "list the fleet's clients, their phases and the last legacy sighting",
		Long:  fleetSummary,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 0 {
				return usageErrorf("fleet takes no arguments, or forget ID, or cleanup")
			}
			return runFleet(cmd.Context(), e, g, quiet, watch, interval)
		},
	}
	cmd.Flags().DurationVar(&quiet, "quiet", control.DefaultQuietPeriod, "quiet period used to judge the next step")
	cmd.Flags().BoolVarP(&watch, "watch", "w", false, "redraw every --interval until Ctrl-C")
	cmd.Flags().DurationVar(&interval, "interval", 2*time.Second, "with --watch: time between two readings")
	cmd.AddCommand(newForgetCmd(e, g), newCleanupCmd(e, g))
	return cmd
}

// runFleet is `lockbridge fleet`: the status once, or redrawn with --watch.
func runFleet(ctx context.Context, e *env, g *globalFlags, quiet time.Duration, watch bool,
	interval time.Duration) error {
	asJSON, err := g.wantJSON("fleet", true)
	if err != nil {
		return err
	}
	if interval <= 0 {
		return usageErrorf("--interval %v: want a positive duration", interval)
	}
	ctl, closeFn, err := fleetController(ctx, e, &g.conn, quiet)
	if err != nil {
		return err
	}
	defer closeFn()
	if watch {
		return watchFleet(ctx, e, &g.conn, ctl, interval, asJSON)
	}
	cctx, cancel := g.conn.callCtx(ctx)
	defer cancel()
	st, err := ctl.Status(cctx)
	if err != nil {
		return err
	}
	if asJSON {
		if err := writeJSON(e.stdout, fleetDoc(st)); err != nil {
			return err
		}
	} else {
		printStatus(e.stdout, st)
	}
	return fleetOutcome(st)
}

// newForgetCmd is `lockbridge fleet forget ID`.
func newForgetCmd(e *env, g *globalFlags) *cobra.Command {
	var force bool
	forget := &cobra.Command{
		Use:   "forget ID",
		Short: "remove a client known dead from the registry",
		Long:  forgetLong,
		Args:  exactArgs(1, "fleet takes no arguments, or forget ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, err := g.wantJSON("fleet forget", false); err != nil {
				return err
			}
			id := args[0]
			ctl, closeFn, err := fleetController(cmd.Context(), e, &g.conn, control.DefaultQuietPeriod)
			if err != nil {
				return err
			}
			defer closeFn()
			cctx, cancel := g.conn.callCtx(cmd.Context())
			defer cancel()
			ok, err := ctl.Forget(cctx, id, force)
			switch {
			case errors.Is(err, control.ErrUnsafeStep):
				return &exitErr{exitUnsafe, fmt.Errorf("%w\n(re-run with --force if you know it is dead)", err)}
			case err != nil:
				return err
			case !ok:
				return fmt.Errorf("no client %s in the registry of namespace %s", printable(id),
					printable(g.conn.ns(e)))
			}
			fmt.Fprintf(e.stdout, "forgot client %s\n", printable(id))
			return nil
		},
	}
	forget.Flags().BoolVar(&force, "force", false, "remove the entry even while it is live")
	return forget
}

func fleetController(ctx context.Context, e *env, cf *connFlags, quiet time.Duration) (*control.Controller, func(),
	error) {
	c, closeFn, err := cf.dial(ctx, e)
	if err != nil {
		return nil, nil, err
	}
	ctl, err := control.New(c, cf.ns(e), control.WithQuietPeriod(quiet))
	if err != nil {
		closeFn()
		return nil, nil, usageErrorf("%v", err)
	}
	return ctl, closeFn, nil
}

// atModern reports a fleet at modern with nothing to step to: no step is
// due, so none is unsafe.
func atModern(st control.Status) bool {
	_, hasNext := st.Phase.Next()
	return st.PhaseProblem == nil && !hasNext && len(st.Blockers) <= 1
}

// fleetOutcome is fleet's exit: exit 4 when the next step is not safe or
// the phase is unknown, so that a script can gate on it.
func fleetOutcome(st control.Status) error {
	next, hasNext := st.Phase.Next()
	switch {
	case st.PhaseProblem != nil:
		return &exitErr{exitUnsafe,
			fmt.Errorf("namespace %s: phase unknown (%s): no step is safe", printable(st.Namespace), st.PhaseProblem.Reason)}
	case atModern(st) || st.Safe():
		return nil
	case hasNext:
		return &exitErr{exitUnsafe,
			fmt.Errorf("namespace %s: the next step %v → %v is not safe (%d blockers)", printable(st.Namespace), st.Phase,
				next, len(st.Blockers))}
	}
	return &exitErr{exitUnsafe,
		fmt.Errorf("namespace %s: at modern with %d blockers", printable(st.Namespace), len(st.Blockers))}
}

// agoServer is how long before the server's now t was, for display.
func agoServer(now, t time.Time) string {
	if t.IsZero() {
		return "?"
	}
	return now.Sub(t).Round(time.Millisecond).String() + " ago"
}

// printStatus prints the fleet's status for a person: the phase, a line
// per client, the last legacy sighting and whether the next step is safe.
func printStatus(out io.Writer, st control.Status) {
	now := st.Now
	if st.PhaseProblem != nil {
		fmt.Fprintf(out, "namespace %s: phase UNKNOWN (%s)", printable(st.Namespace), st.PhaseProblem.Reason)
	} else {
		fmt.Fprintf(out, "namespace %s: phase %v", printable(st.Namespace), st.Phase)
		if !st.Since.IsZero() {
			fmt.Fprintf(out, " since %s (%s)", st.Since.UTC().Format(time.RFC3339), agoServer(now, st.Since))
		}
	}
	fmt.Fprintf(out, "; protocol %d", st.Protocol)
	if st.Evidence != 0 {
		fmt.Fprintf(out, "; evidence shows %v", st.Evidence)
	}
	fmt.Fprintln(out)
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "CLIENT\tHOST\tPID\tPHASE\tHOLDS\tLAST HEARTBEAT\tSTATE")
	for _, c := range st.Members {
		fmt.Fprintln(w, memberRow(now, c))
	}
	_ = w.Flush()
	if len(st.Members) == 0 {
		fmt.Fprintln(out, "(no clients registered)")
	}
	if st.Sighting.At.IsZero() {
		fmt.Fprintln(out, "legacy sighting: none recorded")
	} else {
		fmt.Fprintf(out, "legacy sighting: %s on key %q (%d in all)\n", agoServer(now, st.Sighting.At),
			st.Sighting.Key, st.Sighting.Count)
	}
	printNextStep(out, st)
}

// memberRow is a client's line of printStatus's table, its cells separated
// by tabs.
func memberRow(now time.Time, c control.Member) string {
	state := "live"
	switch {
	case c.Invalid != nil:
		state = "UNREADABLE: " + message(c.Invalid)
	case c.Protocol != control.ProtocolVersion:
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
	if c.Protocol != control.ProtocolVersion {
		seen = "? (client clock)"
	}
	return fmt.Sprintf("%s\t%s\t%d\t%s\t%s\t%s\t%s", printable(c.ID), printable(c.Host), c.PID, phase, holds, seen,
		printable(state))
}

// printNextStep prints printStatus's last lines: the next step and whether
// it is safe, with what blocks it.
func printNextStep(out io.Writer, st control.Status) {
	next, hasNext := st.Phase.Next()
	switch {
	case st.PhaseProblem != nil:
		fmt.Fprintf(out, "next step: none: %s\n", message(st.PhaseProblem))
	case atModern(st):
		fmt.Fprintln(out, "next step: none, the fleet is at modern")
	case st.Safe():
		fmt.Fprintf(out, "next step: %v → %v is safe\n", st.Phase, next)
	default:
		if hasNext {
			fmt.Fprintf(out, "next step: %v → %v is NOT safe:\n", st.Phase, next)
		} else {
			fmt.Fprintln(out, "next step: none, the fleet is at modern; blockers of any step:")
		}
		for _, b := range st.Blockers {
			fmt.Fprintf(out, "  - %s\n", printable(b.Text))
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
