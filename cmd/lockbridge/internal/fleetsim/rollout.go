package fleetsim

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"strings"
	"time"

	"github.com/lockbridge/lockbridge/migrate"
	"github.com/lockbridge/lockbridge/migrate/control"
)

// rollout is the deployer: legacy, dual-write (the Java workers retired at
// its end), dual-read, modern, and the rollback of one step when asked.
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
	s.retireJava(ctx)
	if err := s.moveTo(ctx, goWorkers, migrate.PhaseDualRead, "dual-read: every Go worker runs dual-read",
		step); err != nil {
		return err
	}
	if err := s.moveTo(ctx, goWorkers, migrate.PhaseModern, "modern: every Go worker runs modern",
		2*step); err != nil {
		return err
	}
	if s.cfg.Rollback {
		return s.rollBack(ctx, goWorkers)
	}
	return nil
}

// retireJava retires the Java workers before dual-read, unless KeepJava.
func (s *Sim) retireJava(ctx context.Context) {
	if s.cfg.KeepJava {
		s.setStage("dual-write: the Java workers are kept running (unsafe)")
		return
	}
	java := s.byKind(Java)
	if len(java) == 0 {
		return
	}
	s.setStage("dual-write: retiring the Java workers")
	for _, w := range java {
		w.retire()
	}
	s.emit(EventRetire, "retired %d Java workers: no legacy-only locker runs any more", len(java))
	s.tryEarly(ctx, "just after retiring the Java workers")
}

// moveTo steps the fleet to phase once the controller finds it safe,
// redeploys the Go workers at it, and lets them run for dwell.
func (s *Sim) moveTo(ctx context.Context, goWorkers []*worker, phase migrate.Phase, stage string,
	dwell time.Duration) error {
	if err := s.advanceWhenSafe(ctx, phase); err != nil {
		return err
	}
	if err := s.redeploy(ctx, goWorkers, phase); err != nil {
		return err
	}
	s.setStage("%s", stage)
	return sleep(ctx, dwell)
}

// rollBack rolls the fleet back one step, modern → dual-read, and
// redeploys the Go workers at dual-read.
func (s *Sim) rollBack(ctx context.Context, goWorkers []*worker) error {
	st, err := s.ctl.Rollback(ctx, false)
	if err != nil {
		return fmt.Errorf("fleetsim: rollback: %w", err)
	}
	s.moved(st.To)
	s.mu.Lock()
	s.rolled = true
	s.mu.Unlock()
	s.emit(EventPhase, "controller rolled back %v → %v (always allowed: neighbouring phases exclude each other)",
		st.From, st.To)
	if err := s.redeploy(ctx, goWorkers, migrate.PhaseDualRead); err != nil {
		return err
	}
	s.setStage("dual-read: rolled back; every Go worker runs dual-read")
	return sleep(ctx, s.step)
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
	var ue *control.UnsafeStepError
	switch {
	case errors.As(err, &ue):
		s.refusal(ue, why)
	case err == nil:
		s.moved(st.To)
		s.emit(EventPhase, "controller advanced %v → %v", st.From, st.To)
	}
}

func (s *Sim) refusal(ue *control.UnsafeStepError, why string) {
	msg := fmt.Sprintf("%v → %v (%s): %s", ue.Step.From, ue.Step.To, why,
		strings.Join(foldBlockers(ue.Blockers, ue.Step.From), "; "))
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
		if next, _ := st.Phase.Next(); st.Safe() && next == to {
			err := s.advance(ctx, false)
			if err == nil || !errors.Is(err, control.ErrUnsafeStep) {
				return err
			}
		} else if st.Phase != to-1 {
			return fmt.Errorf("fleetsim: the fleet is at %v, not %v: someone else moved it", st.Phase, to-1)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("fleetsim: the controller never allowed the step to %v: %s", to,
				strings.Join(foldBlockers(st.Blockers, st.Phase), "; "))
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
func foldBlockers(bs []control.Blocker, fleet migrate.Phase) []string {
	var out []string
	at := map[migrate.Phase]int{} // a lagging phase → its line in out
	n := map[migrate.Phase]int{}
	for _, b := range bs {
		if b.Kind != control.BlockClientPhase {
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
