package main

import (
	"context"
	"fmt"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/lockbridge/lockbridge/migrate"
)

func runFleet(e *env, args []string) error {
	fs := newFlags(e, "fleet", "[flags]", "List the namespace's clients (phase, last heartbeat), the last legacy sighting,\nand whether the next phase step is safe.")
	var cf connFlags
	cf.register(fs.FlagSet, false)
	quiet := fs.Duration("quiet", migrate.DefaultQuietPeriod, "quiet period used to judge the next step")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return usageErrorf("fleet takes no arguments")
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
	st, err := ctl.Status(cctx)
	if err != nil {
		return err
	}
	printStatus(e, st, time.Now())
	return nil
}

func printStatus(e *env, st migrate.Status, now time.Time) {
	fmt.Fprintf(e.stdout, "namespace %s: phase %v", printable(st.Namespace), st.Phase)
	if !st.Since.IsZero() {
		fmt.Fprintf(e.stdout, " since %s (%v ago)", st.Since.Format(time.RFC3339), now.Sub(st.Since).Round(time.Second))
	}
	fmt.Fprintln(e.stdout)
	w := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "CLIENT\tHOST\tPID\tPHASE\tLAST HEARTBEAT\tSTATE")
	for _, c := range st.Clients {
		state := "live"
		if !c.Live(now) {
			state = "dead"
		}
		fmt.Fprintf(w, "%s\t%s\t%d\t%v\t%v ago\t%s\n", printable(c.ID), printable(c.Host), c.PID, c.Phase, now.Sub(c.Seen).Round(time.Millisecond), state)
	}
	_ = w.Flush()
	if len(st.Clients) == 0 {
		fmt.Fprintln(e.stdout, "(no clients registered)")
	}
	if st.Sighting.At.IsZero() {
		fmt.Fprintln(e.stdout, "legacy sighting: none recorded")
	} else {
		fmt.Fprintf(e.stdout, "legacy sighting: %v ago on key %q (%d in all)\n", now.Sub(st.Sighting.At).Round(time.Second), st.Sighting.Key, st.Sighting.Count)
	}
	switch {
	case !st.HasNext:
		fmt.Fprintln(e.stdout, "next step: none, the fleet is at modern")
	case st.Safe():
		fmt.Fprintf(e.stdout, "next step: %v → %v is safe\n", st.Phase, st.Next)
	default:
		fmt.Fprintf(e.stdout, "next step: %v → %v is NOT safe:\n", st.Phase, st.Next)
		for _, b := range st.Blockers {
			fmt.Fprintf(e.stdout, "  - %s\n", b)
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
