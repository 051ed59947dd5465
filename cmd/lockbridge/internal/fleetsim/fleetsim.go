package fleetsim

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lockbridge/lockbridge/migrate"
)

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
	closed   atomic.Int64 // lock calls that failed closed (Snapshot.FailedClosed)
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
	cfg, err := withDefaults(cfg)
	if err != nil {
		return nil, err
	}
	if err := cfg.check(); err != nil {
		return nil, err
	}
	s := &Sim{cfg: cfg, phase: migrate.PhaseLegacy, stage: "starting"}
	s.step = (cfg.Duration - cfg.Quiet) / time.Duration(s.slots())
	if s.step < MinStep {
		need := cfg.Quiet + MinStep*time.Duration(s.slots())
		return nil, fmt.Errorf("fleetsim: duration %v is too short for %d Go workers: want at least %v", cfg.Duration,
			cfg.GoWorkers, need.Round(100*time.Millisecond))
	}
	// Init waits until the namespace has shown no trace for the phase lease
	// and the lease of the fleet it would miss, with the liveness margin.
	copts := []migrate.ControllerOption{migrate.WithQuietPeriod(cfg.Quiet),
		migrate.WithInitSilence(migrate.DefaultPhaseLeaseIntervals*cfg.Heartbeat + cfg.Lease +
			migrate.DefaultLivenessMargin)}
	if cfg.Fresh {
		copts = append(copts, migrate.WithMaxmemoryPolicy("noeviction"))
	}
	ctl, err := migrate.NewController(cfg.Client, cfg.Namespace, copts...)
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

// withDefaults is cfg with its zero fields set to their defaults (Config
// documents them).
func withDefaults(cfg Config) (Config, error) {
	if cfg.Client == nil {
		return cfg, errors.New("fleetsim: no Redis client")
	}
	if cfg.Namespace == "" {
		cfg.Namespace = "fleetsim"
	}
	if cfg.Prefix == "" {
		cfg.Prefix = cfg.Namespace + ":lock:"
	}
	if !cfg.NoJava {
		orDefault(&cfg.JavaWorkers, DefaultJavaWorkers)
	} else if cfg.JavaWorkers != 0 {
		return cfg, errors.New("fleetsim: NoJava with Java workers")
	}
	orDefault(&cfg.GoWorkers, DefaultGoWorkers)
	orDefault(&cfg.Locks, DefaultLocks)
	orDefault(&cfg.Lease, DefaultLease)
	orDefault(&cfg.Hold, cfg.Lease/25)
	orDefault(&cfg.Duration, DefaultDuration)
	orDefault(&cfg.Quiet, DefaultQuiet)
	orDefault(&cfg.Heartbeat, DefaultHeartbeat)
	return cfg, nil
}

// orDefault sets *v to d when it is zero.
func orDefault[T int | time.Duration](v *T, d T) {
	if *v == 0 {
		*v = d
	}
}

// check checks cfg's bounds, its defaults set.
func (cfg Config) check() error {
	switch {
	case cfg.JavaWorkers < 0 || cfg.JavaWorkers > MaxWorkers:
		return fmt.Errorf("fleetsim: %d Java workers: want 0 to %d", cfg.JavaWorkers, MaxWorkers)
	case cfg.GoWorkers < 1 || cfg.GoWorkers > MaxWorkers:
		return fmt.Errorf("fleetsim: %d Go workers: want 1 to %d", cfg.GoWorkers, MaxWorkers)
	case cfg.Locks < 1 || cfg.Locks > MaxLocks:
		return fmt.Errorf("fleetsim: %d locks: want 1 to %d", cfg.Locks, MaxLocks)
	case cfg.Lease < MinLease || cfg.Lease%time.Millisecond != 0:
		return fmt.Errorf("fleetsim: lease %v: want whole milliseconds, at least %v", cfg.Lease, MinLease)
	case cfg.Hold <= 0 || cfg.Hold >= cfg.Lease/4:
		return fmt.Errorf("fleetsim: hold %v: want above 0 and below a quarter of the lease (%v)", cfg.Hold,
			cfg.Lease/4)
	case cfg.Quiet < 0 || cfg.Heartbeat < time.Millisecond || cfg.Duration < 0:
		return fmt.Errorf("fleetsim: quiet period %v, heartbeat %v, duration %v: want positive", cfg.Quiet,
			cfg.Heartbeat, cfg.Duration)
	}
	return nil
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
		ByKind:       map[Kind]Counts{},
		ByPhase:      map[migrate.Phase]Counts{},
		Overlaps:     s.overlaps.Load(),
		Errors:       s.errs.Load(),
		FailedClosed: s.closed.Load(),
		Step:         s.step,
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
	if err := s.claim(ctx); err != nil {
		return s.summary(), err
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
	s.emit(EventStart, "%d Java workers (the Java seed algorithm) and %d Go workers (migrate.Locker, phase legacy) "+
		"contend for %d locks, lease %v; a step is %v, the quiet period %v",
		s.cfg.JavaWorkers, s.cfg.GoWorkers, s.cfg.Locks, s.cfg.Lease, s.step.Round(time.Millisecond), s.cfg.Quiet)
	for _, w := range s.workers {
		wg.Add(1)
		w.started.Store(true)
		go func(w *worker) {
			defer wg.Done()
			w.run(wctx)
		}(w)
	}
	err := s.rollout(ctx)
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

// claim makes the namespace the run's: a new one is initialised at legacy;
// one at another phase, or with live clients, is refused.
func (s *Sim) claim(ctx context.Context) error {
	p, err := s.ctl.Phase(ctx)
	var pe *migrate.PhaseUnknownError
	if errors.As(err, &pe) && pe.Reason == migrate.ReasonUninitialized {
		// A new namespace: start it at legacy, as an operator does with
		// `lockbridge phase init` — which waits until it has shown no trace
		// for the init silence, unless the server is the run's own.
		if !s.cfg.Fresh {
			s.emit(EventWait, "initialising namespace %q: init waits until it has shown no trace of a locker for "+
				"the fleet's phase lease, lease and liveness margin", s.cfg.Namespace)
		}
		// In a cluster init refuses a namespace without a mark unless
		// forced (its node may have lost the mark alone); the run's own
		// namespace holds only the run's locks, and a namespace in use is
		// refused below.
		if _, err := s.ctl.Init(ctx, s.cfg.Fresh || s.cfg.Client.Cluster()); err != nil {
			return fmt.Errorf("fleetsim: %w", err)
		}
		p, err = s.ctl.Phase(ctx)
	}
	if err != nil {
		return fmt.Errorf("fleetsim: %w", err)
	}
	if p != migrate.PhaseLegacy {
		return fmt.Errorf("fleetsim: namespace %q is at phase %v; the rollout starts at legacy: use a fresh namespace",
			s.cfg.Namespace, p)
	}
	st, err := s.ctl.Status(ctx)
	if err != nil {
		return fmt.Errorf("fleetsim: %w", err)
	}
	if live := len(st.Members) - countDead(st.Members); live > 0 {
		return fmt.Errorf("fleetsim: namespace %q has %d live clients: the simulation needs a namespace of its own",
			s.cfg.Namespace, live)
	}
	return nil
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
	// The run's namespace is retired for good (its lockers have stopped):
	// its mark goes too.
	mark, _ := migrate.MarkKey(s.cfg.Namespace)
	keys = append(keys, mark)
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
