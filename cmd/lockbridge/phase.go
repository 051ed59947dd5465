package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/lockbridge/lockbridge/migrate"
)

func runPhase(e *env, args []string) error {
	const summary = `get: print the namespace's phase (legacy, dual-write, dual-read or modern).
set: move the fleet one step to PHASE, the next phase or the previous one. A step
forward is refused while a live client lags or holds a lock of another phase,
while a registry entry does not parse or is of an older format, or, past
dual-write, while a legacy sighting is younger than the quiet period (or the
fleet ran dual-write for less); --force takes it anyway and prints the blockers
it overrode. A step back is refused only while a live client runs or holds a
phase that does not exclude the previous one.
init: start a namespace that never had a phase at legacy. Lockers refuse to lock
in a namespace without a phase: absence is never read as legacy.
repair --to PHASE: set a phase that was lost (evicted, flushed, lost in a
failover) or went back (a restore), restarting the quiet period. Without --force
only to the highest phase the evidence shows (lockbridge fleet prints it).

Exit codes: 0 done, 4 refused (unsafe, or more than one step), 1 an error,
2 bad usage.`
	fs := newFlags(e, "phase", "get|set|init|repair [flags] [PHASE]", summary)
	var cf connFlags
	cf.register(fs.FlagSet, false)
	force := fs.Bool("force", false, "take the step despite its blockers (prints them loudly)")
	quiet := fs.Duration("quiet", migrate.DefaultQuietPeriod, "quiet period: how long no legacy sighting may be seen before a step beyond dual-write")
	to := fs.String("to", "", "repair: the phase to restore")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usageErrorf("phase: want get, set, init or repair (see --help)")
	}
	ctx := context.Background()
	switch fs.Arg(0) {
	case "get":
		if fs.NArg() != 1 {
			return usageErrorf("phase get takes no arguments")
		}
		c, closeFn, err := cf.dial(ctx, e)
		if err != nil {
			return err
		}
		defer closeFn()
		ctl, err := migrate.NewController(c, cf.ns(e))
		if err != nil {
			return usageErrorf("%v", err)
		}
		cctx, cancel := cf.callCtx(ctx)
		defer cancel()
		p, err := ctl.Phase(cctx)
		if err != nil {
			return err
		}
		fmt.Fprintln(e.stdout, p)
		return nil
	case "set":
		if fs.NArg() != 2 {
			return usageErrorf("phase set takes one PHASE: legacy, dual-write, dual-read or modern")
		}
		want, err := migrate.ParsePhase(fs.Arg(1))
		if err != nil {
			return usageErrorf("%v", err)
		}
		c, closeFn, err := cf.dial(ctx, e)
		if err != nil {
			return err
		}
		defer closeFn()
		if *quiet < migrate.DefaultQuietPeriod && !*force {
			// The quiet period is the migration's safety margin: shortening
			// it is overriding the controller, as loudly as --force.
			return usageErrorf("phase set: --quiet %v is below the default %v: that overrides the controller's check; add --force to mean it", *quiet, migrate.DefaultQuietPeriod)
		}
		ctl, err := migrate.NewController(c, cf.ns(e), migrate.WithQuietPeriod(*quiet))
		if err != nil {
			return usageErrorf("%v", err)
		}
		if *quiet < migrate.DefaultQuietPeriod {
			fmt.Fprintf(e.stderr, "WARNING: quiet period shortened to %v (default %v).\n", *quiet, migrate.DefaultQuietPeriod)
		}
		return setPhase(ctx, e, &cf, ctl, want, *force)
	case "init":
		if fs.NArg() != 1 {
			return usageErrorf("phase init takes no arguments")
		}
		c, closeFn, err := cf.dial(ctx, e)
		if err != nil {
			return err
		}
		defer closeFn()
		ctl, err := migrate.NewController(c, cf.ns(e))
		if err != nil {
			return usageErrorf("%v", err)
		}
		cctx, cancel := cf.callCtx(ctx)
		defer cancel()
		switch err := ctl.Init(cctx); {
		case errors.Is(err, migrate.ErrAlreadyInitialized):
			fmt.Fprintf(e.stdout, "already initialised: %s\n", message(err))
			return nil
		case errors.Is(err, migrate.ErrPhaseUnknown):
			return &exitErr{exitUnsafe, err}
		case err != nil:
			return err
		}
		fmt.Fprintf(e.stdout, "namespace %s initialised at legacy\n", printable(cf.ns(e)))
		return nil
	case "repair":
		if fs.NArg() != 1 {
			return usageErrorf("phase repair takes no arguments: the phase goes in --to")
		}
		if *to == "" {
			return usageErrorf("phase repair needs --to PHASE (see 'lockbridge fleet' for the phase the evidence shows)")
		}
		want, err := migrate.ParsePhase(*to)
		if err != nil {
			return usageErrorf("%v", err)
		}
		c, closeFn, err := cf.dial(ctx, e)
		if err != nil {
			return err
		}
		defer closeFn()
		ctl, err := migrate.NewController(c, cf.ns(e))
		if err != nil {
			return usageErrorf("%v", err)
		}
		cctx, cancel := cf.callCtx(ctx)
		defer cancel()
		step, err := ctl.Repair(cctx, want, *force)
		if err != nil {
			if errors.Is(err, migrate.ErrUnsafeStep) {
				return &exitErr{exitUnsafe, fmt.Errorf("%w\n(re-run with --force to override)", err)}
			}
			return err
		}
		for _, b := range step.Overridden {
			fmt.Fprintf(e.stderr, "WARNING: forced past a blocker: %s\n", b)
		}
		fmt.Fprintf(e.stdout, "phase repaired to %v; the quiet period starts again\n", step.To)
		return nil
	}
	return usageErrorf("phase: unknown subcommand %q: want get, set, init or repair", fs.Arg(0))
}

func setPhase(ctx context.Context, e *env, cf *connFlags, ctl *migrate.Controller, want migrate.Phase, force bool) error {
	cctx, cancel := cf.callCtx(ctx)
	defer cancel()
	cur, err := ctl.Phase(cctx)
	if err != nil {
		return err
	}
	var step migrate.Step
	switch {
	case want == cur:
		fmt.Fprintf(e.stdout, "already at %v\n", cur)
		return nil
	case want == cur+1 || want == cur-1:
		// From the phase just read: if someone moves the fleet meanwhile,
		// this fails rather than take a step nobody asked for.
		step, err = ctl.Step(cctx, cur, want, force)
	default:
		return &exitErr{exitUnsafe, fmt.Errorf("the fleet is at %v: it moves one step at a time, to %v or back", cur, neighbours(cur))}
	}
	if err != nil {
		if errors.Is(err, migrate.ErrUnsafeStep) {
			return &exitErr{exitUnsafe, fmt.Errorf("%w\n(re-run with --force to override)", err)}
		}
		return err
	}
	for _, b := range step.Overridden {
		fmt.Fprintf(e.stderr, "WARNING: forced past a blocker: %s\n", b)
	}
	if len(step.Overridden) > 0 {
		fmt.Fprintln(e.stderr, "WARNING: a forced step can let two holders in while a legacy locker runs.")
	}
	fmt.Fprintf(e.stdout, "%v → %v\n", step.From, step.To)
	return nil
}

func neighbours(p migrate.Phase) string {
	var s []string
	if q, ok := p.Next(); ok {
		s = append(s, q.String())
	}
	if q, ok := p.Prev(); ok {
		s = append(s, q.String())
	}
	if len(s) == 2 {
		return s[0] + " or back to " + s[1]
	}
	return s[0]
}
