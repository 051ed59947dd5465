package migrate

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/driver"
)

var (
	// ErrUnsafeStep means Advance refused a step; Status().Blockers says why.
	ErrUnsafeStep = errors.New("migrate: unsafe step")
	// ErrPhaseChanged means another controller moved the phase meanwhile.
	ErrPhaseChanged = errors.New("migrate: phase changed meanwhile")
)

// DefaultQuietPeriod is how long no legacy sighting may have been recorded
// (and, for the step to DualRead, how long the fleet must have run
// DualWrite) before the controller allows a step beyond DualWrite.
const DefaultQuietPeriod = 15 * time.Minute

// Controller moves a namespace's fleet through the phases one step at a
// time. It refuses a step while any live client is not yet at the current
// phase, and a step beyond DualWrite while a legacy sighting is younger than
// the quiet period or the fleet has run DualWrite for less than it. Rollback
// by one step is always allowed.
type Controller struct {
	s     store
	quiet time.Duration
	now   func() time.Time
	err   error
}

// ControllerOption configures a Controller.
type ControllerOption func(*Controller)

// WithQuietPeriod sets the quiet period. Default DefaultQuietPeriod (15
// minutes); it must be positive.
func WithQuietPeriod(d time.Duration) ControllerOption {
	return func(c *Controller) {
		if d <= 0 {
			c.err = fmt.Errorf("migrate: %w: quiet period %v must be positive", lockbridge.ErrInvalid, d)
			return
		}
		c.quiet = d
	}
}

// WithControllerClock sets the controller's clock. Default time.Now.
func WithControllerClock(now func() time.Time) ControllerOption {
	return func(c *Controller) {
		if now == nil {
			c.err = fmt.Errorf("migrate: %w: nil clock", lockbridge.ErrInvalid)
			return
		}
		c.now = now
	}
}

// NewController returns the controller of namespace ns (the namespace the
// fleet's lockers name in WithPhaseFrom).
func NewController(c driver.Client, ns string, opts ...ControllerOption) (*Controller, error) {
	k, err := newNSKeys(ns)
	if err != nil {
		return nil, err
	}
	ctl := &Controller{s: store{c: c, k: k}, quiet: DefaultQuietPeriod, now: time.Now}
	for _, o := range opts {
		o(ctl)
	}
	if ctl.err != nil {
		return nil, ctl.err
	}
	return ctl, nil
}

// Status is a namespace's migration state as the controller sees it.
type Status struct {
	Namespace string
	Phase     Phase
	Since     time.Time // when Phase was set; zero if never set by a controller
	Clients   []Client  // the registry, live and recently dead
	Live      map[Phase]int
	Sighting  Sighting
	// Next is the phase Advance would move to; HasNext is false at Modern.
	Next    Phase
	HasNext bool
	// Blockers say why Advance would refuse now; empty when the step is safe.
	Blockers []string
}

// Safe reports whether Advance would take the next step without force.
func (s Status) Safe() bool { return s.HasNext && len(s.Blockers) == 0 }

// Step is a phase change made by Advance or Rollback.
type Step struct {
	From, To Phase
	// Overridden lists the blockers that force overrode; empty otherwise.
	Overridden []string
}

// Phase returns the namespace's current phase (PhaseLegacy when unset).
func (c *Controller) Phase(ctx context.Context) (Phase, error) { return c.s.phase(ctx) }

// Status reads the phase, the registry and the last sighting, and works out
// whether the next step is safe. It changes nothing (Advance and Rollback
// drop registry entries dead for longer than the quiet period).
func (c *Controller) Status(ctx context.Context) (Status, error) {
	now := c.now()
	st := Status{Namespace: c.s.k.ns, Live: map[Phase]int{}}
	var err error
	if st.Phase, err = c.s.phase(ctx); err != nil {
		return st, err
	}
	if st.Since, err = c.s.since(ctx); err != nil {
		return st, err
	}
	if st.Clients, err = c.s.clients(ctx); err != nil {
		return st, err
	}
	if st.Sighting, err = c.s.sighting(ctx); err != nil {
		return st, err
	}
	for _, cl := range st.Clients {
		if cl.Live(now) {
			st.Live[cl.Phase]++
			if cl.Phase != st.Phase {
				st.Blockers = append(st.Blockers, fmt.Sprintf("client %q%s runs %v, the fleet is at %v", cl.ID, hostOf(cl), cl.Phase, st.Phase))
			}
		}
	}
	st.Next, st.HasNext = st.Phase.Next()
	if !st.HasNext {
		st.Blockers = append(st.Blockers, "already at modern: nothing to advance to")
	} else if st.Next > PhaseDualWrite {
		if age := now.Sub(st.Sighting.At); !st.Sighting.At.IsZero() && age < c.quiet {
			st.Blockers = append(st.Blockers, fmt.Sprintf("a legacy-only locker was seen %v ago on key %q (quiet period %v): retire every legacy locker first", age.Round(time.Second), st.Sighting.Key, c.quiet))
		}
		if st.Next == PhaseDualRead {
			if ran := now.Sub(st.Since); st.Since.IsZero() || ran < c.quiet {
				st.Blockers = append(st.Blockers, fmt.Sprintf("the fleet has run dual-write for %v, less than the quiet period %v", ran.Round(time.Second), c.quiet))
			}
		}
	}
	return st, nil
}

func hostOf(c Client) string {
	if c.Host == "" {
		return ""
	}
	return fmt.Sprintf(" (%q pid %d)", c.Host, c.PID)
}

// Advance moves the fleet one phase forward from the phase it is at now.
// Without force it refuses with an error wrapping ErrUnsafeStep while Status
// has blockers; with force it moves anyway and reports the overridden
// blockers in the Step.
func (c *Controller) Advance(ctx context.Context, force bool) (Step, error) {
	cur, err := c.s.phase(ctx)
	if err != nil {
		return Step{}, err
	}
	next, ok := cur.Next()
	if !ok {
		return Step{}, fmt.Errorf("%w: already at %v", ErrUnsafeStep, cur)
	}
	return c.Step(ctx, cur, next, force)
}

// Rollback moves the fleet one phase back from the phase it is at now. From
// a settled fleet — every live client at the current phase — it is always
// allowed: the previous phase neighbours the current one. While an earlier
// step is still rolling out, a second step back could put a live client
// beside a phase it does not exclude (a client still at modern or dual-read
// beside legacy), so Rollback refuses such a step with an error wrapping
// ErrUnsafeStep unless force.
func (c *Controller) Rollback(ctx context.Context, force bool) (Step, error) {
	cur, err := c.s.phase(ctx)
	if err != nil {
		return Step{}, err
	}
	prev, ok := cur.Prev()
	if !ok {
		return Step{}, fmt.Errorf("%w: already at %v, nothing to roll back to", ErrUnsafeStep, cur)
	}
	return c.Step(ctx, cur, prev, force)
}

// Step moves the fleet from phase from to the neighbouring phase to, under
// the rules of Advance (to = from's next) or Rollback (to = from's
// previous). It fails with an error wrapping ErrPhaseChanged when the fleet
// is not at from — say, another operator took the step meanwhile — so a
// command never takes a step other than the one asked for.
func (c *Controller) Step(ctx context.Context, from, to Phase, force bool) (Step, error) {
	next, _ := from.Next()
	prev, _ := from.Prev()
	if !from.Valid() || !to.Valid() || (to != next && to != prev) || to == from {
		return Step{}, fmt.Errorf("migrate: %w: a step goes to a neighbouring phase, not %v → %v", ErrUnsafeStep, from, to)
	}
	st, err := c.Status(ctx)
	if err != nil {
		return Step{}, err
	}
	if st.Phase != from {
		return Step{}, fmt.Errorf("migrate: %w: the fleet is at %v, not %v", ErrPhaseChanged, st.Phase, from)
	}
	step := Step{From: from, To: to}
	now := c.now()
	if err := c.s.prune(ctx, st.Clients, now, c.quiet); err != nil {
		return step, err
	}
	var blockers []string
	if to == next {
		blockers = st.Blockers
	} else {
		for _, cl := range st.Clients {
			if cl.Live(now) && !Compatible(cl.Phase, to) {
				blockers = append(blockers, fmt.Sprintf("client %q%s runs %v, which does not exclude %v", cl.ID, hostOf(cl), cl.Phase, to))
			}
		}
	}
	if len(blockers) > 0 {
		if !force {
			return step, &UnsafeStepError{Step: step, Blockers: blockers}
		}
		step.Overridden = blockers
	}
	return step, c.s.setPhase(ctx, from, to, now)
}

// UnsafeStepError is Advance's refusal: the step and its blockers. It wraps
// ErrUnsafeStep.
type UnsafeStepError struct {
	Step     Step
	Blockers []string
}

func (e *UnsafeStepError) Error() string {
	msg := fmt.Sprintf("migrate: refusing %v → %v:", e.Step.From, e.Step.To)
	for _, b := range e.Blockers {
		msg += "\n  - " + b
	}
	return msg
}

func (e *UnsafeStepError) Unwrap() error { return ErrUnsafeStep }
