package fleetsim

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/internal/testing/javareplay"
	"github.com/lockbridge/lockbridge/migrate"
)

// worker is one member of the fleet, run by one goroutine (run). A Go
// worker's Locker is touched only by that goroutine once it runs: the
// deployer asks for a redeploy through flips, and the worker does it
// between two locks, as an instance restarting in a rolling deploy would.
type worker struct {
	s    *Sim
	name string
	kind Kind

	phase atomic.Int32
	state atomic.Value // WorkerState
	// Counters by phase (index: the migrate.Phase).
	acquired, contended, overlaps [migrate.PhaseModern + 1]atomic.Int64

	locker *migrate.Locker // Go workers only

	flips    chan flipReq
	stop     chan struct{}
	stopped  sync.Once
	done     chan struct{}
	started  atomic.Bool
	retiring atomic.Bool
}

type flipReq struct {
	to   migrate.Phase
	done chan error
}

func (s *Sim) newWorker(name string, kind Kind) *worker {
	w := &worker{s: s, name: name, kind: kind, flips: make(chan flipReq), stop: make(chan struct{}),
		done: make(chan struct{})}
	w.phase.Store(int32(migrate.PhaseLegacy))
	w.state.Store(StateRunning)
	return w
}

func (w *worker) currentPhase() migrate.Phase { return migrate.Phase(w.phase.Load()) }

func (w *worker) currentState() WorkerState { return w.state.Load().(WorkerState) }

func (w *worker) counts(p migrate.Phase) Counts {
	return Counts{Acquired: w.acquired[p].Load(), Contended: w.contended[p].Load(), Overlaps: w.overlaps[p].Load()}
}

func (w *worker) overlap(p migrate.Phase) { w.overlaps[p].Add(1) }

func (w *worker) describe() string {
	if w.kind == Java {
		return w.name + " (Java seed)"
	}
	return fmt.Sprintf("%s (%v)", w.name, w.currentPhase())
}

// deploy (re)starts a Go worker's Locker in phase p: the old one is closed
// (it leaves the fleet registry), the new one heartbeats at once.
func (w *worker) deploy(ctx context.Context, p migrate.Phase) error {
	if w.kind != Go {
		return nil
	}
	w.state.Store(StateDeploying)
	defer w.state.Store(StateRunning)
	if w.locker != nil {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		err := w.locker.Close(cctx)
		cancel()
		w.locker = nil
		if err != nil {
			return fmt.Errorf("fleetsim: %s: close: %w", w.name, err)
		}
	}
	l := migrate.New(w.s.cfg.Client, migrate.WithPhase(p), migrate.WithNamespace(w.s.cfg.Namespace),
		migrate.WithPhaseInterval(w.s.cfg.Heartbeat))
	// The first Phase call registers the Locker in the fleet registry.
	if _, err := l.Phase(ctx); err != nil {
		_ = l.Close(context.WithoutCancel(ctx))
		return fmt.Errorf("fleetsim: %s: start in %v: %w", w.name, p, err)
	}
	w.locker = l
	w.phase.Store(int32(p))
	return nil
}

// flip asks the worker to redeploy in phase p and waits until it has.
func (w *worker) flip(ctx context.Context, p migrate.Phase) error {
	f := flipReq{to: p, done: make(chan error, 1)}
	select {
	case w.flips <- f:
	case <-w.done:
		return fmt.Errorf("fleetsim: %s stopped", w.name)
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-f.done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (w *worker) stopOnce() { w.stopped.Do(func() { close(w.stop) }) }

// retire stops the worker and waits until it has released what it held.
func (w *worker) retire() {
	w.retiring.Store(true)
	w.stopOnce()
	if w.started.Load() {
		<-w.done
	}
	w.state.Store(StateRetired)
}

// run is the worker's goroutine: lock, hold, unlock, pause, until stopped.
func (w *worker) run(ctx context.Context) {
	defer close(w.done)
	defer func() {
		if w.locker != nil {
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
			_ = w.locker.Close(cctx)
			cancel()
		}
		if !w.retiring.Load() {
			w.state.Store(StateStopped)
		}
	}()
	for {
		select {
		case <-w.stop:
			return
		case <-ctx.Done():
			return
		case f := <-w.flips:
			err := w.deploy(ctx, f.to)
			f.done <- err
			if err != nil { // no Locker to run: the deployer gives up too
				return
			}
			continue
		default:
		}
		if w.kind == Java {
			w.javaRound(ctx)
		} else {
			w.goRound(ctx)
		}
		pause(ctx, w.stop, time.Duration(float64(w.s.cfg.Hold)*rand.Float64()))
	}
}

// pause waits d, or less when ctx ends or stop closes.
func pause(ctx context.Context, stop <-chan struct{}, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	case <-stop:
	}
}

// hold is the critical section: the exclusion check is entered after the
// acquire and left before the release.
func (w *worker) hold(ctx context.Context, i int) {
	w.s.enter(w, i)
	pause(ctx, w.stop, w.s.holdTime())
	w.s.leave(w, i)
}

// releaseCtx is for releasing what the worker holds even when ctx ended.
func releaseCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), time.Second)
}

// goRound is one lock of a Go worker: TryLock, and when held, Lock for at
// most a lease.
func (w *worker) goRound(ctx context.Context) {
	p := w.currentPhase()
	i := w.s.pick()
	name, lease := w.s.names[i], w.s.cfg.Lease
	lk, err := w.locker.TryLock(ctx, name, lease)
	if errors.Is(err, lockbridge.ErrNotObtained) {
		w.contended[p].Add(1)
		wctx, cancel := context.WithTimeout(ctx, lease)
		lk, err = w.locker.Lock(wctx, name, lease)
		cancel()
	}
	if err != nil {
		switch {
		case ctx.Err() != nil || errors.Is(err, lockbridge.ErrNotObtained):
		case errors.Is(err, migrate.ErrPhaseUnknown) || errors.Is(err, lockbridge.ErrUnknownOutcome):
			w.s.closed.Add(1) // refused when it could not be sure
			time.Sleep(10 * time.Millisecond)
		default:
			w.s.workerError(w, err)
			time.Sleep(10 * time.Millisecond)
		}
		return
	}
	w.acquired[p].Add(1)
	w.hold(ctx, i)
	rctx, cancel := releaseCtx(ctx)
	defer cancel()
	if err := lk.Unlock(rctx); err != nil {
		over := errors.Is(err, lockbridge.ErrNotHeld) && !time.Now().Before(lk.ExpiresAt())
		if over || errors.Is(err, lockbridge.ErrUnknownOutcome) {
			w.s.closed.Add(1) // a stalled worker's lease ran out, or the reply never came
		} else {
			w.s.workerError(w, fmt.Errorf("unlock %s: %w", name, err))
		}
	}
}

// javaRound is one lock of a Java worker, as the seed's blocking loop does
// it: lock() once, and Thread.sleep(100) between attempts, here for at
// most a lease; then unlock().
func (w *worker) javaRound(ctx context.Context) {
	i := w.s.pick()
	name, lease := w.s.names[i], w.s.cfg.Lease
	c := w.s.cfg.Client
	deadline := time.Now().Add(lease)
	waited := false
	for {
		expiry, ok, err := javareplay.Lock(ctx, c, name, lease, nil)
		if err != nil {
			if ctx.Err() == nil {
				w.s.workerError(w, err)
				time.Sleep(10 * time.Millisecond)
			}
			return
		}
		if ok {
			w.acquired[migrate.PhaseLegacy].Add(1)
			w.hold(ctx, i)
			rctx, cancel := releaseCtx(ctx)
			defer cancel()
			if err := javareplay.Unlock(rctx, c, name, expiry, nil); err != nil {
				w.s.workerError(w, err)
			}
			return
		}
		if !waited {
			waited = true
			w.contended[migrate.PhaseLegacy].Add(1)
		}
		if time.Now().After(deadline) {
			return
		}
		t := time.NewTimer(javareplay.Poll)
		select {
		case <-t.C:
		case <-w.stop:
			t.Stop()
			return
		case <-ctx.Done():
			t.Stop()
			return
		}
	}
}
