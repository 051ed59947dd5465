package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/lockbridge/lockbridge/cmd/lockbridge/internal/fleetsim"
	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/driver/goredis"
	"github.com/lockbridge/lockbridge/migrate"
	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"
)

const demoSummary = `Run a mixed fleet migrating live from the legacy lock to the modern one.

Java workers run the Java seed algorithm (SETNX + GET + GETSET, replayed command
for command); Go workers run migrate.Locker. The controller rolls the Go workers
through legacy -> dual-write -> dual-read -> modern one worker at a time, and
the Java workers are retired before dual-read. Inside every critical section an
exclusion check counts overlaps: two holders of one lock at once.

Without --redis (or --cluster) it runs on an embedded Redis (miniredis), in
process: nothing to install. REDIS_URL is not read here. On a real server it
uses a fresh namespace and lock names of its own, and deletes them at the end.

With --java-migrates the Java workers are lockbridge-java's MigrateLocker in real
JVMs (the interop worker jar, --java-jar) and migrate with the Go fleet to
modern instead of being retired; it needs --redis (the JVMs connect to it).

Exit codes: 0 no overlap, 3 an overlap was seen, 1 an error, 2 bad usage.`

// demoPrefix starts every demo namespace, and so its lock names.
const demoPrefix = "lockbridge-demo-"

// demoMinLease is the shortest lease the demo accepts.
const demoMinLease = 100 * time.Millisecond

// demoOpts are the demo's flags.
type demoOpts struct {
	duration, lease, quiet                  time.Duration
	java, gos, locks                        int
	rollback, keepJava, plain, javaMigrates bool
	javaJar                                 string
}

func newDemoCmd(e *env, g *globalFlags) *cobra.Command {
	var o demoOpts
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "run a mixed Java/Go fleet migrating live (embedded Redis unless --redis)",
		Long:  demoSummary,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 0 {
				return usageErrorf("demo takes no arguments, only flags (see 'lockbridge demo --help')")
			}
			if _, err := g.wantJSON("demo", false); err != nil {
				return err
			}
			return runDemo(cmd.Context(), e, g.conn, &o, cmd.Flags().Changed)
		},
	}
	fs := cmd.Flags()
	fs.DurationVar(&o.duration, "duration", fleetsim.DefaultDuration,
		"about how long the rollout takes; it sets the pace of the redeploys")
	fs.IntVar(&o.java, "java", fleetsim.DefaultJavaWorkers, "Java-algorithm workers (0 for none)")
	fs.IntVar(&o.gos, "go", fleetsim.DefaultGoWorkers, "Go workers")
	fs.IntVar(&o.locks, "locks", fleetsim.DefaultLocks, "lock names the workers contend for")
	fs.DurationVar(&o.lease, "lease", fleetsim.DefaultLease, "lease of every lock")
	fs.DurationVar(&o.quiet, "quiet", fleetsim.DefaultQuiet, "the controller's quiet period before dual-read")
	fs.BoolVar(&o.rollback, "rollback", true, "end with a rollback of one step, modern -> dual-read")
	fs.BoolVar(&o.keepJava, "keep-java", false,
		"UNSAFE, to show what the controller prevents: keep the Java workers and force the steps past dual-write "+
			"(overlaps, exit 3)")
	fs.BoolVar(&o.plain, "plain", false, "print plain periodic lines even on a terminal")
	fs.BoolVar(&o.javaMigrates, "java-migrates", false,
		"the Java workers are lockbridge-java in real JVMs and migrate with the fleet to modern (needs --redis, java "+
			"and the interop worker jar; --java JVMs, default 2; --lease default 2s)")
	fs.StringVar(&o.javaJar, "java-jar", defaultJavaJar, "the interop Java worker jar, for --java-migrates")
	return cmd
}

// runDemo checks the flags, connects, runs the simulated fleet under the
// live view, cleans up a real server's keys and turns the summary into the
// exit status. With --java-migrates it runs the JVM fleet instead.
func runDemo(ctx context.Context, e *env, cf connFlags, o *demoOpts, set func(string) bool) error {
	if o.javaMigrates {
		if err := o.checkJavaMigrates(set); err != nil {
			return err
		}
		return runJavaDemo(ctx, e, cf, o.javaJar, o.java, o.gos, o.lease)
	}
	if err := o.check(cf); err != nil {
		return err
	}
	// Nothing is dialled before the flags are all checked.
	uc, where, embeddedRun, closeAll, err := demoClient(e, cf)
	if err != nil {
		return err
	}
	defer closeAll()
	ns := demoNamespace(cf)
	r := newRenderer(e.stdout, e.isTTY && !o.plain)
	r.size, r.total = e.termSize, o.duration
	sim, err := fleetsim.New(o.simConfig(goredis.New(uc), embeddedRun, ns, r.event))
	if err != nil {
		return usageErrorf("demo: %s", message(err))
	}
	if err := cf.ping(ctx, uc, where); err != nil {
		return err
	}

	r.header = fmt.Sprintf("lockbridge demo on %s, namespace %s, locks %s…", where, ns,
		strings.TrimSuffix(sim.Names()[0], "0"))
	if o.keepJava {
		r.header += "\nUNSAFE RUN (--keep-java): the Java workers are never retired and the controller is forced past " +
			"dual-write"
	}
	r.start(sim.Snapshot)
	sum, runErr := sim.Run(ctx)
	r.stop()
	if !embeddedRun {
		cctx, cancel := context.WithTimeout(context.Background(), cf.timeout)
		if err := sim.Cleanup(cctx); err != nil {
			fmt.Fprintf(e.stderr, "lockbridge: demo: cleaning up the demo keys: %v\n", err)
		}
		cancel()
	}
	if len(sum.Reached) > 0 { // it ran
		printSummary(e.stdout, sum, o.keepJava)
	}
	return demoOutcome(ctx, sum, runErr)
}

// checkJavaMigrates checks the flags of --java-migrates and sets the
// defaults that differ from the simulated fleet's: 2 JVMs and a 2 s lease.
func (o *demoOpts) checkJavaMigrates(set func(string) bool) error {
	for _, f := range []string{"keep-java", "locks", "duration", "quiet", "rollback", "plain"} {
		if set(f) {
			return usageErrorf("demo: --%s does not apply to --java-migrates", f)
		}
	}
	if !set("java") {
		o.java = 2
	}
	if !set("lease") {
		o.lease = 2 * time.Second
	}
	if o.lease < time.Second {
		// A JVM stalled (GC, JIT) longer than the lease while it holds
		// would outlive its lock: no lock without fencing survives that.
		return usageErrorf("demo: --java-migrates needs --lease >= 1s, got %v", o.lease)
	}
	if o.gos < 1 {
		return usageErrorf("demo: want --go >= 1")
	}
	return nil
}

// check checks the flags of the simulated fleet.
func (o *demoOpts) check(cf connFlags) error {
	if o.java < 0 || o.gos < 1 || o.locks < 1 {
		return usageErrorf("demo: want --java >= 0, --go >= 1 and --locks >= 1")
	}
	if o.keepJava && o.java == 0 {
		return usageErrorf("demo: --keep-java needs Java workers (--java >= 1)")
	}
	if o.lease < demoMinLease {
		// Shorter leases let the Java seed's own check-then-DEL race (a DEL
		// landing after its lease ended) show as overlaps on a loaded machine.
		return usageErrorf("demo: --lease %v is below %v", o.lease, demoMinLease)
	}
	if cf.timeout <= 0 {
		return usageErrorf("demo: --timeout must be positive")
	}
	if cf.namespace != "" && !strings.HasPrefix(cf.namespace, demoPrefix) {
		// The demo moves its namespace's phase and deletes its keys at the
		// end: never a namespace (or lock names) of a real fleet.
		return usageErrorf("demo: --namespace must start with %q: the demo runs only in a namespace of its own",
			demoPrefix)
	}
	return nil
}

// demoClient returns the demo's client: on an embedded Redis unless
// --redis or --cluster names a server (embedded then reports true), where
// it is, and what closes it.
func demoClient(e *env, cf connFlags) (uc redis.UniversalClient, where string, embedded bool, closeAll func(),
	err error) {
	if cf.url != "" || cf.cluster != "" {
		if uc, where, err = cf.client(e, true); err != nil {
			return nil, "", false, nil, err
		}
		return uc, where, false, func() { _ = uc.Close() }, nil
	}
	em, err := startEmbedded()
	if err != nil {
		return nil, "", false, nil, err
	}
	uc = redis.NewClient(&redis.Options{Addr: em.addr(), MaxRetries: -1})
	closeAll = func() {
		_ = uc.Close()
		em.close()
	}
	return uc, "embedded Redis (miniredis) on " + em.addr(), true, closeAll, nil
}

// demoNamespace is --namespace, or a fresh one under demoPrefix.
func demoNamespace(cf connFlags) string {
	if cf.namespace != "" {
		return cf.namespace
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	return demoPrefix + hex.EncodeToString(b[:])
}

// simConfig is the simulated fleet the flags describe.
func (o *demoOpts) simConfig(c driver.Client, fresh bool, ns string, onEvent func(fleetsim.Event)) fleetsim.Config {
	return fleetsim.Config{
		Client:      c,
		Fresh:       fresh,
		Namespace:   ns,
		JavaWorkers: o.java,
		NoJava:      o.java == 0,
		GoWorkers:   o.gos,
		Locks:       o.locks,
		Lease:       o.lease,
		Duration:    o.duration,
		Quiet:       o.quiet,
		Rollback:    o.rollback,
		KeepJava:    o.keepJava,
		OnEvent:     onEvent,
	}
}

// demoOutcome is the demo's exit status: exit 3 on an overlap, an error
// when the run failed, was interrupted, met Redis errors or did not reach
// every phase.
func demoOutcome(ctx context.Context, sum fleetsim.Summary, runErr error) error {
	switch {
	case sum.Overlaps > 0:
		return &exitErr{exitOverlap, fmt.Errorf("demo: %d overlaps: two holders held one lock at once", sum.Overlaps)}
	case runErr != nil && ctx.Err() != nil:
		return fmt.Errorf("demo interrupted: %w", ctx.Err())
	case runErr != nil:
		return fmt.Errorf("demo: %s", message(runErr))
	case sum.Errors > 0:
		return fmt.Errorf("demo: %d Redis errors in the workers (first: %s)", sum.Errors, sum.FirstErrors[0])
	case !sum.ReachedAll():
		return fmt.Errorf("demo: the fleet did not reach every phase")
	}
	return nil
}

// renderer draws the live view: on a terminal a block redrawn in place
// under the scrolling event log; otherwise the events and one status line
// a second.
type renderer struct {
	w      io.Writer
	tty    bool
	header string
	// size returns the terminal's columns and rows (nil, or 0s: 80×24);
	// total is the rollout's expected length, for the time left.
	size  func() (w, h int)
	total time.Duration
	drawn [2]int // the size the last block was drawn at

	mu     sync.Mutex
	events []fleetsim.Event
	lines  int // lines of the block drawn last (tty)

	snap func() fleetsim.Snapshot
	quit chan struct{}
	done chan struct{}
}

func newRenderer(w io.Writer, tty bool) *renderer {
	return &renderer{w: w, tty: tty, quit: make(chan struct{}), done: make(chan struct{})}
}

func (r *renderer) event(ev fleetsim.Event) {
	r.mu.Lock()
	r.events = append(r.events, ev)
	r.mu.Unlock()
}

func (r *renderer) start(snap func() fleetsim.Snapshot) {
	r.snap = snap
	fmt.Fprintln(r.w, r.header)
	every := time.Second
	if r.tty {
		every = 100 * time.Millisecond
	}
	go func() {
		defer close(r.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-r.quit:
				r.draw(true)
				return
			case <-t.C:
				r.draw(false)
			}
		}
	}()
}

func (r *renderer) stop() {
	close(r.quit)
	<-r.done
}

// termSize is the terminal's size, 80×24 when unknown.
func (r *renderer) termSize() (w, h int) {
	if r.size != nil {
		w, h = r.size()
	}
	if w <= 0 || h <= 0 {
		return liveWidth + 1, 24
	}
	return w, h
}

// draw prints the new events and the status.
func (r *renderer) draw(final bool) {
	r.mu.Lock()
	evs := r.events
	r.events = nil
	r.mu.Unlock()
	s := r.snap()
	var b strings.Builder
	if r.tty {
		w, h := r.termSize()
		switch {
		case r.lines > 0 && r.drawn != [2]int{w, h}:
			// Resized: the old block has re-wrapped and its line count
			// no longer holds; start again from a clear screen.
			b.WriteString("\x1b[H\x1b[2J")
		case r.lines > 0:
			fmt.Fprintf(&b, "\x1b[%dF\x1b[J", r.lines) // back to the block's first line, clear below
		}
		for _, ev := range evs {
			b.WriteString(eventLine(ev) + "\n")
		}
		block := liveBlock(s, w, h, progressLine(s, r.total))
		b.WriteString(block)
		r.lines = strings.Count(block, "\n")
		r.drawn = [2]int{w, h}
	} else {
		for _, ev := range evs {
			b.WriteString(eventLine(ev) + "\n")
		}
		if !final {
			b.WriteString(statusLine(s) + "\n")
		}
	}
	_, _ = io.WriteString(r.w, b.String())
}

// progressLine is the live view's overall progress: the phase's place
// among the four and the time the rollout has left.
func progressLine(s fleetsim.Snapshot, total time.Duration) string {
	k := int(s.Phase - migrate.PhaseLegacy + 1)
	if s.Phase == 0 {
		k = 0
	}
	rolled := ""
	if len(s.Reached) > 4 {
		rolled = ", rolled back"
	}
	left := "time left unknown"
	switch {
	case total <= 0:
	case s.Elapsed < total:
		left = "about " + (total - s.Elapsed).Round(100*time.Millisecond).String() + " left"
	default:
		left = "finishing"
	}
	return fmt.Sprintf("  phase %d of 4 (%s%s) · %s", k, s.Phase, rolled, left)
}

func eventLine(ev fleetsim.Event) string {
	return fmt.Sprintf("%6.2fs  %-8s %s", ev.At.Seconds(), strings.ToUpper(string(ev.Kind)), ev.Text)
}

// liveWidth bounds the live view's lines when the terminal's size is
// unknown, so that none wraps on an 80-column terminal (a wrapped line
// would throw the redraw off).
const liveWidth = 79

// liveBlock is the terminal view for a terminal of width×height, ending in
// a newline: no line wraps (each is cut at width-1 columns) and the block
// has fewer lines than the terminal (workers left out, counted, when they
// do not fit), so that the redraw can always move back to its first line.
func liveBlock(s fleetsim.Snapshot, width, height int, progress string) string {
	head := []string{
		"",
		fmt.Sprintf("── %5.1fs ── phase %s ──", s.Elapsed.Seconds(), strings.ToUpper(s.Phase.String())),
		progress,
		"  " + s.Stage,
	}
	table := liveNarrow
	if width > liveWidth {
		table = liveWide
	}
	columns, workers, tail := table(s)
	head = append(head, columns)
	if room := height - 1 - len(head) - len(tail); len(workers) > room {
		if room < 1 {
			room = 1
		}
		workers = append(workers[:room-1], fmt.Sprintf("  … %d more workers (a taller terminal shows them)",
			len(workers)-room+1))
	}
	lines := append(append(head, workers...), tail...)
	if most := height - 1; most >= 1 && len(lines) > most {
		// Too short even so: the blank line goes, then the lines from the
		// bottom; the time and the progress stay.
		lines = lines[1:]
		if len(lines) > most {
			lines = lines[:most]
		}
	}
	cut := width - 1
	if cut < 10 {
		cut = 10
	}
	var b strings.Builder
	for _, l := range lines {
		if r := []rune(l); len(r) > cut {
			l = string(r[:cut-1]) + "…"
		}
		b.WriteString(l + "\n")
	}
	return b.String()
}

// liveWide is the live view's table on a terminal of 80 columns or more:
// the column heads, a line per worker, and the totals below.
func liveWide(s fleetsim.Snapshot) (columns string, workers, tail []string) {
	java, gos := s.ByKind[fleetsim.Java], s.ByKind[fleetsim.Go]
	columns = fmt.Sprintf("  %-8s %-10s %-11s %-9s %8s %9s %8s",
		"WORKER", "KIND", "PHASE", "STATE", "ACQUIRED", "CONTENDED", "OVERLAPS")
	tail = []string{
		fmt.Sprintf("  acquired java %d, go %d · contended java %d, go %d · OVERLAPS %d",
			java.Acquired, gos.Acquired, java.Contended, gos.Contended, s.Overlaps),
		"  go acquired by phase: " + byPhase(s),
	}
	for _, w := range s.Workers {
		workers = append(workers, fmt.Sprintf("  %-8s %-10s %-11s %-9s %8d %9d %8d",
			w.Name, shortKind(w.Kind), w.Phase, w.State, w.Acquired, w.Contended, w.Overlaps))
	}
	return columns, workers, tail
}

// liveNarrow is liveWide's table for a terminal narrower than 80 columns:
// the same figures in 56 columns.
func liveNarrow(s fleetsim.Snapshot) (columns string, workers, tail []string) {
	java, gos := s.ByKind[fleetsim.Java], s.ByKind[fleetsim.Go]
	columns = fmt.Sprintf("  %-7s %-4s %-10s %-9s %6s %6s %5s", "WORKER", "KIND", "PHASE", "STATE", "ACQ", "CONT", "OVLP")
	tail = []string{
		fmt.Sprintf("  acquired java %d, go %d · OVERLAPS %d", java.Acquired, gos.Acquired, s.Overlaps),
		fmt.Sprintf("  contended java %d, go %d", java.Contended, gos.Contended),
		fmt.Sprintf("  go acquired: legacy %d, dual-write %d,",
			s.ByPhase[migrate.PhaseLegacy].Acquired, s.ByPhase[migrate.PhaseDualWrite].Acquired),
		fmt.Sprintf("    dual-read %d, modern %d",
			s.ByPhase[migrate.PhaseDualRead].Acquired, s.ByPhase[migrate.PhaseModern].Acquired),
	}
	for _, w := range s.Workers {
		kind := "go"
		if w.Kind == fleetsim.Java {
			kind = "java"
		}
		workers = append(workers, fmt.Sprintf("  %-7s %-4s %-10s %-9s %6d %6d %5d",
			w.Name, kind, w.Phase, w.State, w.Acquired, w.Contended, w.Overlaps))
	}
	return columns, workers, tail
}

func shortKind(k fleetsim.Kind) string {
	if k == fleetsim.Java {
		return "Java seed"
	}
	return "Go migrate"
}

func byPhase(s fleetsim.Snapshot) string {
	var parts []string
	for p := migrate.PhaseLegacy; p <= migrate.PhaseModern; p++ {
		parts = append(parts, fmt.Sprintf("%s %d", p, s.ByPhase[p].Acquired))
	}
	return strings.Join(parts, ", ")
}

// statusLine is the plain view's periodic line.
func statusLine(s fleetsim.Snapshot) string {
	var gos []string
	javaRunning, javaTotal := 0, 0
	for _, w := range s.Workers {
		if w.Kind == fleetsim.Java {
			javaTotal++
			if w.State == fleetsim.StateRunning {
				javaRunning++
			}
			continue
		}
		gos = append(gos, fmt.Sprintf("%s=%s", w.Name, w.Phase))
	}
	return fmt.Sprintf("%6.2fs  STATUS   phase %s | %s | java %d/%d running | acquired java %d, go %d | contended "+
		"java %d, go %d | overlaps %d",
		s.Elapsed.Seconds(), s.Phase, strings.Join(gos, " "), javaRunning, javaTotal,
		s.ByKind[fleetsim.Java].Acquired, s.ByKind[fleetsim.Go].Acquired,
		s.ByKind[fleetsim.Java].Contended, s.ByKind[fleetsim.Go].Contended, s.Overlaps)
}

// printSummary prints the table at the end.
func printSummary(w io.Writer, sum fleetsim.Summary, keepJava bool) {
	fmt.Fprintf(w, "\nSummary after %.1fs\n", sum.Elapsed.Seconds())
	fmt.Fprintf(w, "  %-28s %9s %10s %9s\n", "WORKERS", "ACQUIRED", "CONTENDED", "OVERLAPS")
	row := func(name string, c fleetsim.Counts) {
		fmt.Fprintf(w, "  %-28s %9d %10d %9d\n", name, c.Acquired, c.Contended, c.Overlaps)
	}
	row("java (Java seed algorithm)", sum.ByKind[fleetsim.Java])
	row("go (migrate.Locker)", sum.ByKind[fleetsim.Go])
	for p := migrate.PhaseLegacy; p <= migrate.PhaseModern; p++ {
		row("  go in "+p.String(), sum.ByPhase[p])
	}
	var reached []string
	for _, p := range sum.Reached {
		reached = append(reached, p.String())
	}
	rb := ""
	if sum.RolledBack {
		rb = " (the last step a rollback)"
	}
	fmt.Fprintf(w, "phases reached: %s%s\n", strings.Join(reached, " → "), rb)
	fmt.Fprintf(w, "controller refusals: %d\n", len(sum.RefusedSteps))
	for _, r := range sum.RefusedSteps {
		fmt.Fprintf(w, "  - %s\n", r)
	}
	if len(sum.ForcedSteps) > 0 {
		fmt.Fprintf(w, "forced steps: %d\n", len(sum.ForcedSteps))
		for _, f := range sum.ForcedSteps {
			fmt.Fprintf(w, "  - %s\n", f)
		}
	}
	if sum.FailedClosed > 0 {
		fmt.Fprintf(w, "lock calls that failed closed (a stalled worker: a phase lease lapsed, a reply that never "+
			"came, a lease over before its release): %d\n", sum.FailedClosed)
	}
	if sum.Errors > 0 {
		fmt.Fprintf(w, "Redis errors in the workers: %d\n", sum.Errors)
		for _, e := range sum.FirstErrors {
			fmt.Fprintf(w, "  - %s\n", e)
		}
	}
	if sum.Overlaps == 0 {
		fmt.Fprintln(w, "overlaps: 0 — no two holders ever held a lock at once.")
		return
	}
	fmt.Fprintf(w, "OVERLAPS: %d — two holders held a lock at once:\n", sum.Overlaps)
	for _, o := range sum.OverlapsSeen {
		fmt.Fprintf(w, "  - %s\n", o)
	}
	if keepJava {
		fmt.Fprintln(w, "This is why the controller refuses to pass dual-write while a legacy locker runs.")
	}
}
