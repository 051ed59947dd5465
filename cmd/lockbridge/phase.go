package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lockbridge/lockbridge/migrate"
	"github.com/lockbridge/lockbridge/migrate/control"
	"github.com/spf13/cobra"
)

const phaseSummary = `Read or change the migration's phase: legacy, dual-write, dual-read, modern.

get: print the namespace's phase.
set PHASE: move the fleet one step.
init: give a namespace without a phase its phase.
repair --to PHASE: restore a phase that was lost.

set, init and repair change a namespace: they need --namespace (or
LOCKBRIDGE_NAMESPACE), never "default" by omission, and name the namespace and
the server in what they print. get reads "default" when none is given. Each
subcommand has its own flags: see 'lockbridge phase COMMAND --help'.

Exit codes: 0 done, 4 refused (unsafe, or more than one step), 1 an error,
2 bad usage.`

const phaseGetLong = `Print the namespace's phase: legacy, dual-write, dual-read or modern. Reads
the namespace "default" when neither --namespace nor LOCKBRIDGE_NAMESPACE
names one.

A namespace without a phase (never initialised, or its phase lost) is an
error that says which, and the command that gives it one.

Exit codes: 0 printed, 1 an error (the phase unknown), 2 bad usage.`

// phaseChangeNote ends the --help of every phase change.
const phaseChangeNote = `It changes a namespace: it needs --namespace (or LOCKBRIDGE_NAMESPACE), never
"default" by omission, and names the namespace and the server in what it
prints. It is refused while the server may have evicted the evidence the
controller judges by: an allkeys-* maxmemory-policy, or one it cannot read
(INFO memory refused: declare it with --maxmemory-policy).`

const phaseSetLong = `Move the fleet one step to PHASE: the next phase or the previous one.

A step forward is refused while a live client lags or holds a lock of another
phase, while a registry entry does not parse or is of an older format, or,
past dual-write, while a legacy sighting is younger than the quiet period (or
the fleet ran dual-write for less); --force takes it anyway and prints the
blockers it overrode. A step back is refused only while a live client runs or
holds a phase that does not exclude the previous one.

` + phaseChangeNote + `

Exit codes: 0 done (or already at PHASE), 4 refused (unsafe, or more than one
step), 1 an error, 2 bad usage.`

const phaseInitLong = `Give a namespace without a phase its phase. Lockers refuse to lock in a
namespace without a phase: absence is never read as legacy.

A namespace whose mark (kept apart from its keys) shows where it was gets that
phase back; one whose hash or registry shows it ran is refused (use repair);
one without any trace starts at legacy once it has shown none for --silence by
the server's clock (init waits for that). --force starts it at legacy at once,
whatever it finds. An initialised namespace is left as it is.

` + phaseChangeNote + `

Exit codes: 0 initialised (or already), 4 refused, 1 an error, 2 bad usage.`

const phaseRepairLong = `Set a phase that was lost (evicted, flushed, lost in a failover) or went back
(a restore), restarting the quiet period. Without --force only to the highest
phase the evidence shows ('lockbridge fleet' prints it).

` + phaseChangeNote + `

Exit codes: 0 repaired, 4 refused, 1 an error, 2 bad usage.`

// phaseOpts are the flags of phase's subcommands; each subcommand registers
// its own.
type phaseOpts struct {
	force   bool
	quiet   time.Duration
	silence time.Duration
	policy  string
	to      string
}

// policyFlag registers --maxmemory-policy, which every change takes.
func (o *phaseOpts) policyFlag(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.policy, "maxmemory-policy", "",
		"the server's maxmemory-policy, declared for a server that cannot report it (INFO memory refused); what the server "+
			"reports overrides it")
}

func newPhaseCmd(e *env, g *globalFlags) *cobra.Command {
	var o phaseOpts
	cmd := &cobra.Command{
		Use:   "phase get|set|init|repair",
		Short: "print the namespace's phase, or move it one step",
		Long:  phaseSummary,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageErrorf("phase: want get, set, init or repair (see --help)")
			}
			return usageErrorf("phase: unknown subcommand %q: want get, set, init or repair", args[0])
		},
	}
	phases := []string{"legacy", "dual-write", "dual-read", "modern"}
	sub := func(use, short, long string, args cobra.PositionalArgs, run func(p *phaseRun, ctx context.Context,
		args []string) error) *cobra.Command {
		return &cobra.Command{
			Use: use, Short: short, Long: long, Args: args,
			RunE: func(cmd *cobra.Command, a []string) error {
				asJSON, err := g.wantJSON("phase", true)
				if err != nil {
					return err
				}
				return run(&phaseRun{e: e, cf: &g.conn, o: &o, json: asJSON}, cmd.Context(), a)
			},
		}
	}
	get := sub("get", "print the namespace's phase", phaseGetLong,
		exactArgs(0, "phase get takes no arguments"), (*phaseRun).get)

	set := sub("set PHASE", "move the fleet one step to PHASE", phaseSetLong,
		exactArgs(1, "phase set takes one PHASE: legacy, dual-write, dual-read or modern"), (*phaseRun).set)
	set.ValidArgsFunction = func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return phases, cobra.ShellCompDirectiveNoFileComp
	}
	set.Flags().BoolVar(&o.force, "force", false, "take the step despite its blockers (prints them loudly)")
	set.Flags().DurationVar(&o.quiet, "quiet", control.DefaultQuietPeriod,
		"quiet period: how long no legacy sighting may be seen before a step beyond dual-write (shorter only with --force)")
	o.policyFlag(set)

	initc := sub("init", "start a namespace at legacy (or the phase its mark shows)", phaseInitLong,
		exactArgs(0, "phase init takes no arguments"), (*phaseRun).init)
	initc.Flags().DurationVar(&o.silence, "silence", control.DefaultInitSilence,
		"how long a namespace without a trace must stay so before it starts at legacy: at least the fleet's phase lease + "+
			"longest lease + liveness margin")
	initc.Flags().BoolVar(&o.force, "force", false,
		"start at legacy at once, whatever the namespace shows (prints what it overrode)")
	o.policyFlag(initc)

	repair := sub("repair --to PHASE", "restore a lost phase", phaseRepairLong,
		exactArgs(0, "phase repair takes no arguments: the phase goes in --to"), (*phaseRun).repair)
	repair.Flags().StringVar(&o.to, "to", "", "the phase to restore (required)")
	repair.Flags().BoolVar(&o.force, "force", false,
		"restore a phase beyond what the evidence shows (prints the blockers it overrode)")
	o.policyFlag(repair)
	_ = repair.RegisterFlagCompletionFunc("to", cobra.FixedCompletions(phases, cobra.ShellCompDirectiveNoFileComp))

	cmd.AddCommand(get, set, initc, repair)
	return cmd
}

// exactArgs wants n positional arguments, else a usage error saying msg.
func exactArgs(n int, msg string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) != n {
			return usageErrorf("%s", msg)
		}
		return nil
	}
}

// phaseRun is one run of a phase subcommand.
type phaseRun struct {
	e    *env
	cf   *connFlags
	o    *phaseOpts
	json bool
}

// phaseJSON is `phase … --output json` (schema lockbridge.phase/v1,
// docs/cli.md).
type phaseJSON struct {
	Schema     string   `json:"schema"`
	Action     string   `json:"action"` // get, set, init, repair
	Namespace  string   `json:"namespace"`
	Server     string   `json:"server"`
	Phase      string   `json:"phase"`          // the phase after the command
	From       string   `json:"from,omitempty"` // set, repair: the phase before
	Changed    bool     `json:"changed"`
	Overridden []string `json:"overridden"` // blockers --force overrode
}

func (p *phaseRun) out(doc phaseJSON, text string) error {
	if p.json {
		doc.Schema = "lockbridge.phase/v1"
		if doc.Overridden == nil {
			doc.Overridden = []string{}
		}
		return writeJSON(p.e.stdout, doc)
	}
	fmt.Fprintln(p.e.stdout, text)
	return nil
}

// changedNS is the namespace a change applies to: named by the user, or a
// usage error.
func (p *phaseRun) changedNS(action string) (string, error) {
	ns := p.cf.nsGiven(p.e)
	if ns == "" {
		return "", usageErrorf(
			"phase %s changes a namespace: name it with --namespace NAME (or LOCKBRIDGE_NAMESPACE); there is no default for a "+
				"change", action)
	}
	return ns, nil
}

// controller connects and returns ns's controller, the server's address,
// and a context for its calls (bounded by --timeout); done ends both.
func (p *phaseRun) controller(ctx context.Context, ns string, opts ...control.Option) (ctl *control.Controller,
	where string, cctx context.Context, done func(), err error) {
	c, where, closeFn, err := p.cf.dialAt(ctx, p.e)
	if err != nil {
		return nil, "", nil, nil, err
	}
	if p.o.policy != "" {
		opts = append(opts, control.WithMaxmemoryPolicy(p.o.policy))
	}
	ctl, err = control.New(c, ns, opts...)
	if err != nil {
		closeFn()
		return nil, "", nil, nil, usageErrorf("%v", err)
	}
	cctx, cancel := p.cf.callCtx(ctx)
	return ctl, where, cctx, func() { cancel(); closeFn() }, nil
}

func (p *phaseRun) get(ctx context.Context, _ []string) error {
	ns := p.cf.ns(p.e)
	ctl, where, cctx, done, err := p.controller(ctx, ns)
	if err != nil {
		return err
	}
	defer done()
	ph, err := ctl.Phase(cctx)
	if err != nil {
		return err
	}
	return p.out(phaseJSON{Action: "get", Namespace: ns, Server: where, Phase: ph.String()}, ph.String())
}

func (p *phaseRun) set(ctx context.Context, args []string) error {
	want, err := migrate.ParsePhase(args[0])
	if err != nil {
		return usageErrorf("%v", err)
	}
	ns, err := p.changedNS("set")
	if err != nil {
		return err
	}
	if p.o.quiet < control.DefaultQuietPeriod && !p.o.force {
		// The quiet period is the migration's safety margin: shortening
		// it is overriding the controller, as loudly as --force.
		return usageErrorf("phase set: --quiet %v is below the default %v: that overrides the controller's check; add "+
			"--force to mean it", p.o.quiet, control.DefaultQuietPeriod)
	}
	ctl, where, cctx, done, err := p.controller(ctx, ns, control.WithQuietPeriod(p.o.quiet))
	if err != nil {
		return err
	}
	defer done()
	if p.o.quiet < control.DefaultQuietPeriod {
		fmt.Fprintf(p.e.stderr, "WARNING: quiet period shortened to %v (default %v).\n", p.o.quiet,
			control.DefaultQuietPeriod)
	}
	return p.setPhase(cctx, ctl, ns, where, want)
}

func (p *phaseRun) init(ctx context.Context, _ []string) error {
	ns, err := p.changedNS("init")
	if err != nil {
		return err
	}
	if p.o.silence <= 0 {
		return usageErrorf("phase init: --silence %v: want a positive duration", p.o.silence)
	}
	ctl, where, cctx, done, err := p.controller(ctx, ns, control.WithInitSilence(p.o.silence))
	if err != nil {
		return err
	}
	defer done()
	doc := phaseJSON{Action: "init", Namespace: ns, Server: where}
	st, err := ctl.Status(cctx)
	if err != nil {
		return err
	}
	if st.PhaseProblem == nil {
		doc.Phase = st.Phase.String()
		return p.out(doc, fmt.Sprintf("already initialised: namespace %s is at %v on %s", printable(ns), st.Phase, where))
	}
	if st.PhaseProblem.Reason == migrate.ReasonUninitialized && !p.o.force {
		fmt.Fprintf(p.e.stderr,
			"init: namespace %s shows no trace on %s; it starts at legacy once it has shown none for %v by the server's clock "+
				"(--silence), counted from its first init: waiting...\n", printable(ns), where, p.o.silence)
	}
	// Each call is bounded by --timeout (the client's read timeout); the
	// wait for the silence only by the command's context.
	step, err := ctl.Init(ctx, p.o.force)
	switch {
	case errors.Is(err, control.ErrAlreadyInitialized):
		if ph, perr := ctl.Phase(cctx); perr == nil {
			doc.Phase = ph.String()
		}
		return p.out(doc, fmt.Sprintf("already initialised: %s", message(err)))
	case errors.Is(err, migrate.ErrPhaseUnknown), errors.Is(err, control.ErrUnsafeStep):
		return &exitErr{exitUnsafe, fmt.Errorf("%w\n(namespace %s on %s unchanged)", err, printable(ns), where)}
	case err != nil:
		return err
	}
	doc.Changed, doc.Phase = true, step.To.String()
	for _, b := range step.Overridden {
		doc.Overridden = append(doc.Overridden, b.Text)
		fmt.Fprintf(p.e.stderr, "WARNING: --force overrode: %s\n", b.Text)
	}
	how := "initialised at legacy"
	if step.To != migrate.PhaseLegacy {
		how = fmt.Sprintf("restored to %v, the phase its mark shows", step.To)
	}
	return p.out(doc, fmt.Sprintf("namespace %s %s on %s", printable(ns), how, where))
}

func (p *phaseRun) repair(ctx context.Context, _ []string) error {
	if p.o.to == "" {
		return usageErrorf("phase repair needs --to PHASE (see 'lockbridge fleet' for the phase the evidence shows)")
	}
	want, err := migrate.ParsePhase(p.o.to)
	if err != nil {
		return usageErrorf("%v", err)
	}
	ns, err := p.changedNS("repair")
	if err != nil {
		return err
	}
	ctl, where, cctx, done, err := p.controller(ctx, ns)
	if err != nil {
		return err
	}
	defer done()
	step, err := ctl.Repair(cctx, want, p.o.force)
	if err != nil {
		if errors.Is(err, control.ErrUnsafeStep) {
			return &exitErr{exitUnsafe, fmt.Errorf("%w\n(namespace %s on %s unchanged; re-run with --force to override)", err,
				printable(ns), where)}
		}
		return err
	}
	over := blockerTexts(step.Overridden)
	for _, b := range over {
		fmt.Fprintf(p.e.stderr, "WARNING: forced past a blocker: %s\n", b)
	}
	doc := phaseJSON{Action: "repair", Namespace: ns, Server: where, Phase: step.To.String(), Changed: true,
		Overridden: over}
	if step.From != 0 {
		doc.From = step.From.String()
	}
	return p.out(doc, fmt.Sprintf("namespace %s on %s: phase repaired to %v; the quiet period starts again", printable(ns),
		where, step.To))
}

// setPhase moves ns to want, one step; cctx bounds its calls.
func (p *phaseRun) setPhase(cctx context.Context, ctl *control.Controller, ns, where string, want migrate.Phase) error {
	cur, err := ctl.Phase(cctx)
	if err != nil {
		return err
	}
	var step control.Step
	switch {
	case want == cur:
		return p.out(phaseJSON{Action: "set", Namespace: ns, Server: where, Phase: cur.String(), From: cur.String()},
			fmt.Sprintf("namespace %s on %s: already at %v", printable(ns), where, cur))
	case want == cur+1 || want == cur-1:
		// From the phase just read: if someone moves the fleet meanwhile,
		// this fails rather than take a step nobody asked for.
		step, err = ctl.Step(cctx, cur, want, p.o.force)
	default:
		return &exitErr{exitUnsafe, fmt.Errorf("namespace %s on %s: the fleet is at %v: it moves one step at a time, to %v",
			printable(ns), where, cur, neighbours(cur))}
	}
	if err != nil {
		if errors.Is(err, control.ErrUnsafeStep) {
			return &exitErr{exitUnsafe, fmt.Errorf("%w\n(namespace %s on %s unchanged; re-run with --force to override)", err,
				printable(ns), where)}
		}
		return err
	}
	over := blockerTexts(step.Overridden)
	for _, b := range over {
		fmt.Fprintf(p.e.stderr, "WARNING: forced past a blocker: %s\n", b)
	}
	if len(over) > 0 {
		fmt.Fprintln(p.e.stderr, "WARNING: a forced step can let two holders in while a legacy locker runs.")
	}
	return p.out(phaseJSON{Action: "set", Namespace: ns, Server: where, Phase: step.To.String(), From: step.From.String(),
		Changed: true, Overridden: over},
		fmt.Sprintf("namespace %s on %s: %v → %v", printable(ns), where, step.From, step.To))
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

// blockerTexts are the blockers in words.
func blockerTexts(bs []control.Blocker) []string {
	out := make([]string, 0, len(bs))
	for _, b := range bs {
		out = append(out, printable(fmt.Sprint(b)))
	}
	return out
}
