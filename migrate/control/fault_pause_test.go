package control

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/internal/protocol/migrateproto"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/legacy"
	"github.com/lockbridge/lockbridge/migrate"
)

// freezer stops a whole client process, as SIGSTOP does, the moment it is
// about to send its first acquire: that call and every other Eval or Do
// (its follower's heartbeats) wait until thaw, or their context ends.
type freezer struct {
	driver.Client
	once   sync.Once
	frozen chan struct{} // closed when the freeze begins
	thawed chan struct{}
}

func newFreezer(c driver.Client) *freezer {
	return &freezer{Client: c, frozen: make(chan struct{}), thawed: make(chan struct{})}
}

func (f *freezer) wait(ctx context.Context) error {
	select {
	case <-f.frozen:
	default:
		return nil
	}
	select {
	case <-f.thawed:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (f *freezer) Eval(ctx context.Context, s *driver.Script, keys []string, args ...any) (any, error) {
	if s == migrateproto.AcquireScript {
		f.once.Do(func() { close(f.frozen) })
	}
	if err := f.wait(ctx); err != nil {
		return nil, err
	}
	return f.Client.Eval(ctx, s, keys, args...)
}

func (f *freezer) Do(ctx context.Context, args ...any) (any, error) {
	if err := f.wait(ctx); err != nil {
		return nil, err
	}
	return f.Client.Do(ctx, args...)
}

// A client process stopped (SIGSTOP, a VM pause) between checking its phase
// lease and sending its acquire: while it is stopped its registry entry
// expires and the fleet rolls back from dual-read to legacy; then it
// resumes and its dual-read acquire (the modern key only) lands. It must
// not hand out that lock: the phase lease it was decided under ran out
// before the acquire came back. Before, TryLock returned the dual-read
// lock and a legacy locker took the legacy key beside it: two holders.
func TestFaultAcquireOutlivingThePhaseLease(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := context.Background()
	ns := t.Name()
	ctl := initNS(t, tg.Client, ns, WithLivenessMargin(0))
	walk(t, ctl, migrate.PhaseDualRead)

	fz := newFreezer(tg.Client)
	var thaw sync.Once
	defer thaw.Do(func() { close(fz.thawed) })
	c := migrate.New(fz, migrate.WithPhaseFrom(ns), migrate.WithPhaseInterval(50*time.Millisecond),
		migrate.WithPhaseLease(200*time.Millisecond))
	defer c.Close(ctx)
	ph, err := c.Phase(ctx)
	require.NoError(t, err)
	require.Equal(t, migrate.PhaseDualRead, ph)

	name := locktest.Key(t, "orders")
	type result struct {
		lk  lockbridge.Lock
		err error
	}
	got := make(chan result, 1)
	go func() {
		lk, err := c.TryLock(ctx, name, time.Second)
		got <- result{lk, err}
	}()
	select {
	case <-fz.frozen:
	case <-time.After(10 * time.Second):
		t.Fatal("the acquire was not sent")
	}
	require.Eventually(t, func() bool {
		st, err := ctl.Status(ctx)
		return err == nil && len(st.Members) == 1 && !st.Members[0].Live
	}, 10*time.Second, 10*time.Millisecond, "the stopped client's entry expires")
	for _, to := range []migrate.Phase{migrate.PhaseDualWrite, migrate.PhaseLegacy} {
		_, err := ctl.Step(ctx, to+1, to, false)
		require.NoError(t, err, "nothing live blocks the rollback to %v", to)
	}

	thaw.Do(func() { close(fz.thawed) })
	r := <-got
	if r.err != nil {
		require.ErrorIs(t, r.err, migrate.ErrPhaseUnknown)
		return
	}
	defer r.lk.Unlock(ctx)
	java := legacy.New(tg.Client) // the Java fleet, back at legacy
	_, err = java.TryLock(ctx, name, time.Minute)
	require.ErrorIs(t, err, lockbridge.ErrNotObtained, "no second holder beside the %v lock", heldPhase(r.lk))
}
