package fleetsim

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/migrate"
)

// Kind is a worker's kind.
type Kind string

// The worker kinds.
const (
	// Java is a worker running the Java seed algorithm (internal/testing/javareplay): a
	// legacy locker that never migrates.
	Java Kind = "java"
	// Go is a worker running a migrate.Locker in the phase it was last
	// deployed with.
	Go Kind = "go"
)

// Defaults of Config.
const (
	DefaultJavaWorkers = 3
	DefaultGoWorkers   = 4
	DefaultLocks       = 3
	DefaultLease       = 500 * time.Millisecond
	DefaultDuration    = 20 * time.Second
	DefaultQuiet       = 1500 * time.Millisecond
	DefaultHeartbeat   = 200 * time.Millisecond
)

// Limits of Config.
const (
	MaxWorkers = 64
	MaxLocks   = 64
	MinLease   = 20 * time.Millisecond
	// MinStep is the shortest pause between two redeploys that Duration may
	// leave.
	MinStep = 20 * time.Millisecond
)

// Config configures a simulation. The zero value of every field but
// Client means its default.
type Config struct {
	// Client is the Redis the fleet runs on. Required.
	Client driver.Client
	// Namespace is the migration namespace (its phase key, fleet registry
	// and sightings). Default "fleetsim". It must start at the legacy phase.
	Namespace string
	// Prefix names the locks: Prefix + "0", Prefix + "1", …
	// Default Namespace + ":lock:".
	Prefix string
	// JavaWorkers and GoWorkers are the workers of each kind; Locks the
	// number of lock names they contend for. Defaults 3, 4 and 3. Set
	// NoJava for a fleet without Java workers.
	JavaWorkers, GoWorkers, Locks int
	NoJava                        bool
	// Lease is every lock's lease. Default 500 ms.
	Lease time.Duration
	// Hold is the longest a holder stays in its critical section (each hold
	// is drawn from [Hold/2, Hold]); it must be below Lease/4. Default
	// Lease/25.
	Hold time.Duration
	// Duration is about how long the whole rollout takes, quiet period
	// included: it sets the pace of the redeploys. Default 20 s.
	Duration time.Duration
	// Quiet is the controller's quiet period (migrate.WithQuietPeriod).
	// Default 1.5 s.
	Quiet time.Duration
	// Heartbeat is the Go workers' heartbeat interval
	// (migrate.WithPhaseInterval). Default 200 ms.
	Heartbeat time.Duration
	// Rollback ends the rollout with a rollback from modern to dual-read,
	// redeploying the Go workers back one at a time.
	Rollback bool
	// KeepJava is the unsafe rollout the controller exists to prevent, for
	// tests and for showing what it prevents: the Java workers are never
	// retired, and the deployer forces the controller past the blockers
	// they cause. Overlaps are then expected.
	KeepJava bool
	// OnEvent, if set, receives every event as it happens. Calls are
	// serialized; it must not block for long.
	OnEvent func(Event)
}

// EventKind says what an Event is about.
type EventKind string

// The event kinds.
const (
	EventStart   EventKind = "start"   // the fleet started
	EventPhase   EventKind = "phase"   // the controller moved the fleet's phase
	EventDeploy  EventKind = "deploy"  // a Go worker was redeployed in a new phase
	EventRefused EventKind = "refused" // the controller refused a step
	EventForced  EventKind = "forced"  // a step forced past blockers (KeepJava)
	EventRetire  EventKind = "retire"  // the Java workers were retired
	EventWait    EventKind = "wait"    // the deployer waits (the quiet period)
	EventOverlap EventKind = "overlap" // two holders in one critical section
	EventError   EventKind = "error"   // a worker's Redis error
	EventDone    EventKind = "done"    // the rollout finished
)

// Event is one thing that happened.
type Event struct {
	At   time.Duration // since the start
	Kind EventKind
	Text string
}

func (e Event) String() string {
	return fmt.Sprintf("%6.2fs %-7s %s", e.At.Seconds(), e.Kind, e.Text)
}

// Counts are what a group of workers did.
type Counts struct {
	// Acquired counts the locks taken.
	Acquired int64
	// Contended counts the acquisitions that found the lock held and had
	// to wait (or gave up after a lease of waiting).
	Contended int64
	// Overlaps counts the overlaps this group took part in (on either side).
	Overlaps int64
}

func (c *Counts) add(o Counts) {
	c.Acquired += o.Acquired
	c.Contended += o.Contended
	c.Overlaps += o.Overlaps
}

// WorkerState is what a worker is doing.
type WorkerState string

// The worker states.
const (
	StateRunning   WorkerState = "running"
	StateDeploying WorkerState = "deploying"
	StateRetired   WorkerState = "retired"
	StateStopped   WorkerState = "stopped"
)

// Worker is one worker in a Snapshot.
type Worker struct {
	Name  string // "java-1", "go-2", …
	Kind  Kind
	Phase migrate.Phase // the phase it runs; legacy for a Java worker
	State WorkerState
	Counts
}

// Snapshot is the fleet at one moment.
type Snapshot struct {
	Elapsed time.Duration
	// Phase is the controller's phase; Reached every phase it was moved
	// to, in order, starting with legacy (empty until Run has checked the
	// namespace and started the fleet).
	Phase   migrate.Phase
	Reached []migrate.Phase
	// Stage says what the deployer is doing.
	Stage   string
	Workers []Worker
	// ByKind sums the workers of each kind; ByPhase the Go workers by the
	// phase they ran when they acquired (or waited, or overlapped).
	ByKind  map[Kind]Counts
	ByPhase map[migrate.Phase]Counts
	// Overlaps counts the entries into a critical section that found
	// another holder inside.
	Overlaps int64
	// Refusals counts the steps the controller refused; Forced the steps
	// forced past blockers.
	Refusals, Forced int
	// Errors counts the workers' Redis errors (including releases that
	// found the lock no longer held).
	Errors int64
	// Step is the pause between two redeploys that Duration works out to.
	Step time.Duration
}

// ReachedAll reports whether the controller moved the fleet through every
// phase.
func (s Snapshot) ReachedAll() bool {
	seen := map[migrate.Phase]bool{}
	for _, p := range s.Reached {
		seen[p] = true
	}
	return seen[migrate.PhaseLegacy] && seen[migrate.PhaseDualWrite] && seen[migrate.PhaseDualRead] && seen[migrate.PhaseModern]
}

// Summary is the end of a run: the last snapshot and what the controller
// said.
type Summary struct {
	Snapshot
	// RefusedSteps are the controller's refusals, one line each;
	// ForcedSteps the steps forced past blockers.
	RefusedSteps, ForcedSteps []string
	// RolledBack reports whether the rollback (Config.Rollback) happened.
	RolledBack bool
	// OverlapsSeen describes the first overlaps.
	OverlapsSeen []string
	// FirstErrors are the first worker errors.
	FirstErrors []string
}

// Sim is one simulation. Build it with New, run it once with Run; Snapshot
// may be called from any goroutine meanwhile.
type Sim struct {
	cfg   Config
	step  time.Duration
	names []string
	ctl   *migrate.Controller

	start   time.Time // set by Run, under mu
	workers []*worker
	locks   []lockSlot

	overlaps atomic.Int64
	errs     atomic.Int64
	ran      atomic.Bool
	began    atomic.Bool // the namespace passed the checks: the run owns it

	mu       sync.Mutex // guards the fields below
	phase    migrate.Phase
	reached  []migrate.Phase
	stage    string
	refused  []string
	forced   []string
	rolled   bool
	overSeen []string
	errSeen  []string

	evMu sync.Mutex // serializes OnEvent
}

// lockSlot is the in-process exclusion check of one lock name.
type lockSlot struct {
	mu      sync.Mutex
	holders []*worker
}

const (
	keepOverlaps = 20 // overlaps described in events and the summary
	keepErrors   = 10 // worker errors likewise
)

// New checks cfg and returns the simulation.
func New(cfg Config) (*Sim, error) {
	if cfg.Client == nil {
		return nil, errors.New("fleetsim: no Redis client")
	}
	if cfg.Namespace == "" {
		cfg.Namespace = "fleetsim"
	}
	if cfg.Prefix == "" {
		cfg.Prefix = cfg.Namespace + ":lock:"
	}
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	if !cfg.NoJava {
		def(&cfg.JavaWorkers, DefaultJavaWorkers)
	} else if cfg.JavaWorkers != 0 {
		return nil, errors.New("fleetsim: NoJava with Java workers")
	}
	def(&cfg.GoWorkers, DefaultGoWorkers)
	def(&cfg.Locks, DefaultLocks)
	defd := func(v *time.Duration, d time.Duration) {
		if *v == 0 {
			*v = d
		}
	}
	defd(&cfg.Lease, DefaultLease)
	defd(&cfg.Hold, cfg.Lease/25)
	defd(&cfg.Duration, DefaultDuration)
	defd(&cfg.Quiet, DefaultQuiet)
	defd(&cfg.Heartbeat, DefaultHeartbeat)
	switch {
	case cfg.JavaWorkers < 0 || cfg.JavaWorkers > MaxWorkers:
		return nil, fmt.Errorf("fleetsim: %d Java workers: want 0 to %d", cfg.JavaWorkers, MaxWorkers)
	case cfg.GoWorkers < 1 || cfg.GoWorkers > MaxWorkers:
		return nil, fmt.Errorf("fleetsim: %d Go workers: want 1 to %d", cfg.GoWorkers, MaxWorkers)
	case cfg.Locks < 1 || cfg.Locks > MaxLocks:
		return nil, fmt.Errorf("fleetsim: %d locks: want 1 to %d", cfg.Locks, MaxLocks)
	case cfg.Lease < MinLease || cfg.Lease%time.Millisecond != 0:
		return nil, fmt.Errorf("fleetsim: lease %v: want whole milliseconds, at least %v", cfg.Lease, MinLease)
	case cfg.Hold <= 0 || cfg.Hold >= cfg.Lease/4:
		return nil, fmt.Errorf("fleetsim: hold %v: want above 0 and below a quarter of the lease (%v)", cfg.Hold, cfg.Lease/4)
	case cfg.Quiet < 0 || cfg.Heartbeat < time.Millisecond || cfg.Duration < 0:
		return nil, fmt.Errorf("fleetsim: quiet period %v, heartbeat %v, duration %v: want positive", cfg.Quiet, cfg.Heartbeat, cfg.Duration)
	}
	s := &Sim{cfg: cfg, phase: migrate.PhaseLegacy, stage: "starting"}
	s.step = (cfg.Duration - cfg.Quiet) / time.Duration(s.slots())
	if s.step < MinStep {
		need := cfg.Quiet + MinStep*time.Duration(s.slots())
		return nil, fmt.Errorf("fleetsim: duration %v is too short for %d Go workers: want at least %v", cfg.Duration, cfg.GoWorkers, need.Round(100*time.Millisecond))
	}
	ctl, err := migrate.NewController(cfg.Client, cfg.Namespace, migrate.WithQuietPeriod(cfg.Quiet))
	if err != nil {
		return nil, fmt.Errorf("fleetsim: %w", err)
	}
	s.ctl = ctl
	for i := 0; i < cfg.Locks; i++ {
		s.names = append(s.names, fmt.Sprintf("%s%d", cfg.Prefix, i))
	}
	s.locks = make([]lockSlot, cfg.Locks)
	for i := 0; i < cfg.JavaWorkers; i++ {
		s.workers = append(s.workers, s.newWorker(fmt.Sprintf("java-%d", i+1), Java))
	}
	for i := 0; i < cfg.GoWorkers; i++ {
		s.workers = append(s.workers, s.newWorker(fmt.Sprintf("go-%d", i+1), Go))
	}
	return s, nil
}

// slots is how many steps the rollout takes (the quiet period aside):
// two in legacy, then per phase one per redeploy and a dwell.
func (s *Sim) slots() int {
	n := s.cfg.GoWorkers
	slots := 2 + (n + 2) + (n + 1) + (n + 2)
	if s.cfg.Rollback {
		slots += n + 1
	}
	return slots
}

// Names returns the lock names the workers contend for.
func (s *Sim) Names() []string { return append([]string(nil), s.names...) }

// Snapshot returns the fleet now.
func (s *Sim) Snapshot() Snapshot {
	snap := Snapshot{
		ByKind:   map[Kind]Counts{},
		ByPhase:  map[migrate.Phase]Counts{},
		Overlaps: s.overlaps.Load(),
		Errors:   s.errs.Load(),
		Step:     s.step,
	}
	s.mu.Lock()
	if !s.start.IsZero() {
		snap.Elapsed = time.Since(s.start)
	}
	snap.Phase, snap.Stage = s.phase, s.stage
	snap.Reached = append([]migrate.Phase(nil), s.reached...)
	snap.Refusals, snap.Forced = len(s.refused), len(s.forced)
	s.mu.Unlock()
	for _, w := range s.workers {
		ws := Worker{Name: w.name, Kind: w.kind, Phase: w.currentPhase(), State: w.currentState()}
		for p := migrate.PhaseLegacy; p <= migrate.PhaseModern; p++ {
			c := w.counts(p)
			ws.add(c)
			if w.kind == Go {
				bp := snap.ByPhase[p]
				bp.add(c)
				snap.ByPhase[p] = bp
			}
		}
		bk := snap.ByKind[w.kind]
		bk.add(ws.Counts)
		snap.ByKind[w.kind] = bk
		snap.Workers = append(snap.Workers, ws)
	}
	return snap
}

func (s *Sim) elapsed() time.Duration { return time.Since(s.start) }

func (s *Sim) emit(kind EventKind, format string, args ...any) {
	ev := Event{At: s.elapsed(), Kind: kind, Text: fmt.Sprintf(format, args...)}
	if s.cfg.OnEvent == nil {
		return
	}
	s.evMu.Lock()
	defer s.evMu.Unlock()
	s.cfg.OnEvent(ev)
}

func (s *Sim) setStage(format string, args ...any) {
	s.mu.Lock()
	s.stage = fmt.Sprintf(format, args...)
	s.mu.Unlock()
}

// enter records w inside the critical section of lock i; it reports the
// holders already inside (an overlap when there are any).
func (s *Sim) enter(w *worker, i int) {
	l := &s.locks[i]
	l.mu.Lock()
	others := append([]*worker(nil), l.holders...)
	l.holders = append(l.holders, w)
	l.mu.Unlock()
	if len(others) == 0 {
		return
	}
	n := s.overlaps.Add(1)
	w.overlap(w.currentPhase())
	desc := []string{w.describe()}
	for _, o := range others {
		o.overlap(o.currentPhase())
		desc = append(desc, o.describe())
	}
	msg := fmt.Sprintf("%s: %s held it at once", s.names[i], strings.Join(desc, " and "))
	if n <= keepOverlaps {
		s.mu.Lock()
		s.overSeen = append(s.overSeen, msg)
		s.mu.Unlock()
		s.emit(EventOverlap, "%s", msg)
	}
}

// leave records that w left the critical section of lock i.
func (s *Sim) leave(w *worker, i int) {
	l := &s.locks[i]
	l.mu.Lock()
	defer l.mu.Unlock()
	for j, h := range l.holders {
		if h == w {
			l.holders = append(l.holders[:j], l.holders[j+1:]...)
			return
		}
	}
}

func (s *Sim) workerError(w *worker, err error) {
	if n := s.errs.Add(1); n <= keepErrors {
		msg := fmt.Sprintf("%s: %v", w.describe(), err)
		s.mu.Lock()
		s.errSeen = append(s.errSeen, msg)
		s.mu.Unlock()
		s.emit(EventError, "%s", msg)
	}
}

// Run runs the rollout and returns once it is done and every worker has
// stopped, or when ctx ends (the error then wraps ctx.Err()). It may be
// called once.
func (s *Sim) Run(ctx context.Context) (Summary, error) {
	if !s.ran.CompareAndSwap(false, true) {
		return Summary{}, errors.New("fleetsim: Run called twice")
	}
	s.mu.Lock()
	s.start = time.Now() // read by Snapshot under mu; by elapsed only from goroutines Run starts later
	s.mu.Unlock()
	p, err := s.ctl.Phase(ctx)
	var pe *migrate.PhaseUnknownError
	if errors.As(err, &pe) && pe.Reason == migrate.ReasonUninitialized {
		// A fresh namespace: start it at legacy, as an operator does with
		// `lockbridge phase init`.
		if err := s.ctl.Init(ctx); err != nil {
			return s.summary(), fmt.Errorf("fleetsim: %w", err)
		}
		p, err = s.ctl.Phase(ctx)
	}
	if err != nil {
		return s.summary(), fmt.Errorf("fleetsim: %w", err)
	}
	if p != migrate.PhaseLegacy {
		return s.summary(), fmt.Errorf("fleetsim: namespace %q is at phase %v; the rollout starts at legacy: use a fresh namespace", s.cfg.Namespace, p)
	}
	st, err := s.ctl.Status(ctx)
	if err != nil {
		return s.summary(), fmt.Errorf("fleetsim: %w", err)
	}
	if live := len(st.Members) - countDead(st.Members); live > 0 {
		return s.summary(), fmt.Errorf("fleetsim: namespace %q has %d live clients: the simulation needs a namespace of its own", s.cfg.Namespace, live)
	}
	s.mu.Lock()
	s.reached = []migrate.Phase{migrate.PhaseLegacy}
	s.mu.Unlock()
	s.began.Store(true)

	wctx, stopAll := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() {
		stopAll()
		for _, w := range s.workers {
			w.stopOnce()
		}
		wg.Wait()
		for _, w := range s.workers {
			if !w.started.Load() && w.locker != nil { // never ran: close what deploy started
				_ = w.locker.Close(context.WithoutCancel(ctx))
			}
		}
	}()
	for _, w := range s.workers {
		if err := w.deploy(wctx, migrate.PhaseLegacy); err != nil {
			return s.summary(), err
		}
	}
	s.emit(EventStart, "%d Java workers (the Java seed algorithm) and %d Go workers (migrate.Locker, phase legacy) contend for %d locks, lease %v; a step is %v, the quiet period %v",
		s.cfg.JavaWorkers, s.cfg.GoWorkers, s.cfg.Locks, s.cfg.Lease, s.step.Round(time.Millisecond), s.cfg.Quiet)
	for _, w := range s.workers {
		wg.Add(1)
		w.started.Store(true)
		go func(w *worker) {
			defer wg.Done()
			w.run(wctx)
		}(w)
	}
	err = s.rollout(ctx)
	for _, w := range s.workers {
		w.stopOnce()
	}
	wg.Wait()
	if err != nil {
		return s.summary(), err
	}
	s.setStage("done")
	s.emit(EventDone, "rollout finished: %d overlaps", s.overlaps.Load())
	return s.summary(), nil
}

func countDead(cs []migrate.Member) int {
	n := 0
	for _, c := range cs {
		if !c.Live {
			n++
		}
	}
	return n
}

// Cleanup deletes what a run leaves in Redis: the lock names' legacy and
// modern keys, and the namespace's phase, registry and sighting keys
// (docs/migration.md). Call it after Run, for a run on a shared server. It
// does nothing when Run refused the namespace (not at legacy, or in use).
func (s *Sim) Cleanup(ctx context.Context) error {
	if !s.began.Load() {
		return nil
	}
	keys, err := migrate.NamespaceKeys(s.cfg.Namespace)
	if err != nil {
		return fmt.Errorf("fleetsim: cleanup: %w", err)
	}
	for _, name := range s.names {
		keys = append(keys, name)
		if mk, err := migrate.DeriveModernKey(name); err == nil {
			keys = append(keys, mk)
		}
	}
	for _, k := range keys {
		if _, err := s.cfg.Client.Del(ctx, k); err != nil {
			return fmt.Errorf("fleetsim: cleanup: %w", err)
		}
	}
	return nil
}

func (s *Sim) summary() Summary {
	sum := Summary{Snapshot: s.Snapshot()}
	s.mu.Lock()
	defer s.mu.Unlock()
	sum.RefusedSteps = append([]string(nil), s.refused...)
	sum.ForcedSteps = append([]string(nil), s.forced...)
	sum.RolledBack = s.rolled
	sum.OverlapsSeen = append([]string(nil), s.overSeen...)
	sum.FirstErrors = append([]string(nil), s.errSeen...)
	return sum
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// rollout is the deployer.
func (s *Sim) rollout(ctx context.Context) error {
	step := s.step
	goWorkers := s.byKind(Go)

	s.setStage("legacy: Java and Go workers contend")
	if err := sleep(ctx, 2*step); err != nil {
		return err
	}

	// legacy → dual-write: safe at any time.
	if err := s.advance(ctx, false); err != nil {
		return err
	}
	// Too early on purpose: the Go workers still run legacy.
	s.tryEarly(ctx, "the Go workers still run legacy")
	if err := s.redeploy(ctx, goWorkers, migrate.PhaseDualWrite); err != nil {
		return err
	}
	s.setStage("dual-write: every Go worker runs dual-write; the Java workers still run")
	if err := sleep(ctx, 2*step); err != nil {
		return err
	}

	// Retire the Java workers before dual-read.
	if s.cfg.KeepJava {
		s.setStage("dual-write: the Java workers are kept running (unsafe)")
	} else if java := s.byKind(Java); len(java) > 0 {
		s.setStage("dual-write: retiring the Java workers")
		for _, w := range java {
			w.retire()
		}
		s.emit(EventRetire, "retired %d Java workers: no legacy-only locker runs any more", len(java))
		s.tryEarly(ctx, "just after retiring the Java workers")
	}
	if err := s.advanceWhenSafe(ctx, migrate.PhaseDualRead); err != nil {
		return err
	}
	if err := s.redeploy(ctx, goWorkers, migrate.PhaseDualRead); err != nil {
		return err
	}
	s.setStage("dual-read: every Go worker runs dual-read")
	if err := sleep(ctx, step); err != nil {
		return err
	}

	if err := s.advanceWhenSafe(ctx, migrate.PhaseModern); err != nil {
		return err
	}
	if err := s.redeploy(ctx, goWorkers, migrate.PhaseModern); err != nil {
		return err
	}
	s.setStage("modern: every Go worker runs modern")
	if err := sleep(ctx, 2*step); err != nil {
		return err
	}

	if s.cfg.Rollback {
		st, err := s.ctl.Rollback(ctx, false)
		if err != nil {
			return fmt.Errorf("fleetsim: rollback: %w", err)
		}
		s.moved(st.To)
		s.mu.Lock()
		s.rolled = true
		s.mu.Unlock()
		s.emit(EventPhase, "controller rolled back %v → %v (always allowed: neighbouring phases exclude each other)", st.From, st.To)
		if err := s.redeploy(ctx, goWorkers, migrate.PhaseDualRead); err != nil {
			return err
		}
		s.setStage("dual-read: rolled back; every Go worker runs dual-read")
		if err := sleep(ctx, step); err != nil {
			return err
		}
	}
	return nil
}

func (s *Sim) byKind(k Kind) []*worker {
	var out []*worker
	for _, w := range s.workers {
		if w.kind == k {
			out = append(out, w)
		}
	}
	return out
}

func (s *Sim) moved(to migrate.Phase) {
	s.mu.Lock()
	s.phase = to
	s.reached = append(s.reached, to)
	s.mu.Unlock()
}

// advance takes the next step; with force it overrides (and reports) the
// blockers.
func (s *Sim) advance(ctx context.Context, force bool) error {
	st, err := s.ctl.Advance(ctx, force)
	if err != nil {
		return fmt.Errorf("fleetsim: advance: %w", err)
	}
	s.moved(st.To)
	if len(st.Overridden) > 0 {
		msg := fmt.Sprintf("%v → %v despite: %s", st.From, st.To, strings.Join(foldBlockers(st.Overridden, st.From), "; "))
		s.mu.Lock()
		s.forced = append(s.forced, msg)
		s.mu.Unlock()
		s.emit(EventForced, "FORCED %s", msg)
	}
	s.emit(EventPhase, "controller advanced %v → %v", st.From, st.To)
	return nil
}

// tryEarly asks the controller for the next step when it should refuse,
// and records the refusal (or, should it allow it, takes the step).
func (s *Sim) tryEarly(ctx context.Context, why string) {
	if s.cfg.KeepJava {
		return
	}
	st, err := s.ctl.Advance(ctx, false)
	var ue *migrate.UnsafeStepError
	switch {
	case errors.As(err, &ue):
		s.refusal(ue, why)
	case err == nil:
		s.moved(st.To)
		s.emit(EventPhase, "controller advanced %v → %v", st.From, st.To)
	}
}

func (s *Sim) refusal(ue *migrate.UnsafeStepError, why string) {
	msg := fmt.Sprintf("%v → %v (%s): %s", ue.Step.From, ue.Step.To, why, strings.Join(foldBlockers(ue.Blockers, ue.Step.From), "; "))
	s.mu.Lock()
	s.refused = append(s.refused, msg)
	s.mu.Unlock()
	s.emit(EventRefused, "controller refused %s", msg)
}

// advanceWhenSafe waits until the controller allows the next step and takes
// it. With KeepJava it takes the step with force once the fleet has run a
// quiet period: the controller's blockers, if any, are overridden (a
// sighting is evidence, not proof: a quiet period with no Java worker met
// by chance lets the step through unforced, which is why the real one is
// long).
func (s *Sim) advanceWhenSafe(ctx context.Context, to migrate.Phase) error {
	if s.currentPhase() >= to { // an early try was allowed after all
		return nil
	}
	if s.cfg.KeepJava {
		s.setStage("%v: waiting the quiet period, then forcing the step to %v", s.currentPhase(), to)
		if err := sleep(ctx, s.cfg.Quiet); err != nil {
			return err
		}
		return s.advance(ctx, true)
	}
	s.setStage("%v: waiting until the controller allows %v (quiet period %v)", s.currentPhase(), to, s.cfg.Quiet)
	s.emit(EventWait, "waiting until the controller allows %v", to)
	deadline := time.Now().Add(3*s.cfg.Quiet + 10*s.step + 5*time.Second)
	poll := min(100*time.Millisecond, s.step/2)
	for {
		st, err := s.ctl.Status(ctx)
		if err != nil {
			return fmt.Errorf("fleetsim: %w", err)
		}
		if st.Safe() && st.Next == to {
			err := s.advance(ctx, false)
			if err == nil || !errors.Is(err, migrate.ErrUnsafeStep) {
				return err
			}
		} else if st.Phase != to-1 {
			return fmt.Errorf("fleetsim: the fleet is at %v, not %v: someone else moved it", st.Phase, to-1)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("fleetsim: the controller never allowed the step to %v: %s", to, strings.Join(foldBlockers(st.Blockers, st.Phase), "; "))
		}
		if err := sleep(ctx, poll); err != nil {
			return err
		}
	}
}

func (s *Sim) currentPhase() migrate.Phase {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.phase
}

// redeploy moves the workers to phase p one at a time, a step apart.
func (s *Sim) redeploy(ctx context.Context, ws []*worker, p migrate.Phase) error {
	for i, w := range ws {
		s.setStage("%v: redeploying %s in %v (%d/%d)", s.currentPhase(), w.name, p, i+1, len(ws))
		from := w.currentPhase()
		if err := w.flip(ctx, p); err != nil {
			return err
		}
		s.emit(EventDeploy, "%s redeployed: %v → %v (%d/%d)", w.name, from, p, i+1, len(ws))
		if err := sleep(ctx, s.step); err != nil {
			return err
		}
	}
	return nil
}

// foldBlockers folds the controller's one-blocker-per-lagging-client
// values into one line per phase ("3 clients run legacy, the fleet is at
// dual-write"), keeping the others' text as it is.
func foldBlockers(bs []migrate.Blocker, fleet migrate.Phase) []string {
	var out []string
	at := map[migrate.Phase]int{} // a lagging phase → its line in out
	n := map[migrate.Phase]int{}
	for _, b := range bs {
		if b.Kind != migrate.BlockClientPhase {
			out = append(out, b.Text)
			continue
		}
		if _, ok := at[b.Phase]; !ok {
			at[b.Phase] = len(out)
			out = append(out, b.Text)
		}
		n[b.Phase]++
	}
	for p, i := range at {
		if n[p] > 1 {
			out[i] = fmt.Sprintf("%d clients run %v, the fleet is at %v", n[p], p, fleet)
		}
	}
	return out
}

// pick returns a random lock index.
func (s *Sim) pick() int { return rand.Intn(len(s.names)) }

// holdTime returns a hold drawn from [Hold/2, Hold].
func (s *Sim) holdTime() time.Duration {
	h := s.cfg.Hold
	return h/2 + time.Duration(rand.Int63n(int64(h/2)+1))
}
