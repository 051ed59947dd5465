package fleetsim

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/migrate"
	"github.com/lockbridge/lockbridge/migrate/control"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// TestMain fails the package if a worker, follower or subscription
// goroutine outlives a run.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// events collects a run's events.
type events struct {
	mu sync.Mutex
	ev []Event
}

func (e *events) add(ev Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.ev = append(e.ev, ev)
}

func (e *events) of(k EventKind) []Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []Event
	for _, ev := range e.ev {
		if ev.Kind == k {
			out = append(out, ev)
		}
	}
	return out
}

func (e *events) index(k EventKind, substr string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	for i, ev := range e.ev {
		if ev.Kind == k && strings.Contains(ev.Text, substr) {
			return i
		}
	}
	return -1
}

func TestRollout(t *testing.T) {
	locktest.Run(t, locktest.Single(t), func(t *testing.T, tg locktest.Target) {
		t.Parallel()
		var evs events
		ns := strings.ReplaceAll(locktest.Key(t, "ns"), "/", "-")
		sim, err := New(Config{
			Client:    tg.Client,
			Fresh:     true, // the test started the server
			Namespace: ns,
			Duration:  5 * time.Second,
			Quiet:     500 * time.Millisecond,
			Heartbeat: 100 * time.Millisecond,
			Rollback:  true,
			OnEvent:   evs.add,
		})
		require.NoError(t, err)
		// Snapshots may be read while it runs.
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				case <-time.After(20 * time.Millisecond):
					_ = sim.Snapshot()
				}
			}
		}()
		sum, err := sim.Run(context.Background())
		close(stop)
		wg.Wait()
		require.NoError(t, err)

		assert.Zero(t, sum.Overlaps, "overlaps: %v", sum.OverlapsSeen)
		assert.Zero(t, sum.Errors, "errors: %v", sum.FirstErrors)
		assert.True(t, sum.ReachedAll(), "reached %v", sum.Reached)
		assert.Equal(t, []migrate.Phase{migrate.PhaseLegacy, migrate.PhaseDualWrite, migrate.PhaseDualRead,
			migrate.PhaseModern, migrate.PhaseDualRead}, sum.Reached)
		assert.Equal(t, migrate.PhaseDualRead, sum.Phase)
		assert.True(t, sum.RolledBack)
		assert.GreaterOrEqual(t, sum.Refusals, 1, "the controller must refuse the early step")
		require.NotEmpty(t, sum.RefusedSteps)
		assert.Regexp(t, `runs? legacy, the fleet is at dual-write`, sum.RefusedSteps[0])
		assert.Zero(t, sum.Forced)

		assert.Positive(t, sum.ByKind[Java].Acquired, "the Java workers acquire before they are retired")
		assert.Positive(t, sum.ByKind[Go].Acquired)
		for _, p := range []migrate.Phase{migrate.PhaseLegacy, migrate.PhaseDualWrite, migrate.PhaseDualRead,
			migrate.PhaseModern} {
			assert.Positive(t, sum.ByPhase[p].Acquired, "Go workers acquire in %v", p)
		}
		var java, gow int
		for _, w := range sum.Workers {
			switch w.Kind {
			case Java:
				java++
				assert.Equal(t, StateRetired, w.State, w.Name)
				assert.Equal(t, migrate.PhaseLegacy, w.Phase, w.Name)
			case Go:
				gow++
				assert.Equal(t, StateStopped, w.State, w.Name)
				assert.Equal(t, migrate.PhaseDualRead, w.Phase, w.Name)
			}
		}
		assert.Equal(t, DefaultJavaWorkers, java)
		assert.Equal(t, DefaultGoWorkers, gow)

		// One worker at a time: four redeploys into each phase, in order,
		// and the Java workers retired before the step to dual-read.
		deploys := evs.of(EventDeploy)
		require.Len(t, deploys, 4*DefaultGoWorkers)
		for i, want := range []string{"legacy → dual-write", "dual-write → dual-read", "dual-read → modern",
			"modern → dual-read"} {
			for j := 0; j < DefaultGoWorkers; j++ {
				assert.Contains(t, deploys[i*DefaultGoWorkers+j].Text, want)
			}
		}
		retired := evs.index(EventRetire, "retired")
		toDualRead := evs.index(EventPhase, "dual-write → dual-read")
		require.NotEqual(t, -1, retired)
		require.NotEqual(t, -1, toDualRead)
		assert.Less(t, retired, toDualRead)
		assert.Less(t, evs.index(EventPhase, "legacy → dual-write"), evs.index(EventDeploy, "legacy → dual-write"),
			"the controller moves before the first redeploy")

		// Everyone left the registry.
		ctl, err := control.New(tg.Client, ns)
		require.NoError(t, err)
		st, err := ctl.Status(context.Background())
		require.NoError(t, err)
		assert.Empty(t, st.Members)
	})
}

// The checker can fail: keep the Java workers running into dual-read and
// modern (forcing the controller) and the overlaps must show.
func TestKeepJavaOverlaps(t *testing.T) {
	tg := locktest.Single(t)[0]
	var evs events
	sim, err := New(Config{
		Client:      tg.Client,
		Fresh:       true, // the test started the server
		Namespace:   "keep-java",
		JavaWorkers: 4,
		GoWorkers:   2,
		Locks:       1,
		Duration:    3 * time.Second,
		Quiet:       300 * time.Millisecond,
		Heartbeat:   100 * time.Millisecond,
		KeepJava:    true,
		OnEvent:     evs.add,
	})
	require.NoError(t, err)
	sum, err := sim.Run(context.Background())
	require.NoError(t, err)
	assert.Positive(t, sum.Overlaps, "Java workers beside dual-read and modern Go workers must overlap")
	assert.Positive(t, sum.ByKind[Java].Overlaps)
	assert.Positive(t, sum.ByKind[Go].Overlaps)
	assert.NotEmpty(t, sum.OverlapsSeen)
	assert.NotEmpty(t, evs.of(EventOverlap))
	// The steps past dual-write are forced: refused without force while a
	// sighting is younger than the (short) quiet period, taken either way.
	assert.True(t, sum.ReachedAll(), "reached %v", sum.Reached)
	assert.Zero(t, sum.Refusals)
	assert.Positive(t, sum.ByPhase[migrate.PhaseDualRead].Overlaps+sum.ByPhase[migrate.PhaseModern].Overlaps)
	assert.Zero(t, sum.ByPhase[migrate.PhaseLegacy].Overlaps+sum.ByPhase[migrate.PhaseDualWrite].Overlaps,
		"legacy and dual-write Go workers exclude the Java ones")
	for _, w := range sum.Workers {
		assert.Equal(t, StateStopped, w.State, w.Name)
	}
}

func TestCancel(t *testing.T) {
	tg := locktest.Single(t)[0]
	sim, err := New(Config{Client: tg.Client, Fresh: true, Namespace: "cancel", Duration: 30 * time.Second})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 700*time.Millisecond)
	defer cancel()
	start := time.Now()
	sum, err := sim.Run(ctx)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(start), 5*time.Second)
	assert.Zero(t, sum.Overlaps)
	_, err = sim.Run(context.Background())
	require.Error(t, err, "Run runs once")

	// The namespace keeps no live client once the locks the cancel cut off
	// (an acquire cancelled on its way may have taken its lock) have run
	// out: a closed Locker's entry reports them until then.
	ctl, err := control.New(tg.Client, "cancel", control.WithLivenessMargin(0))
	require.NoError(t, err)
	assert.Eventually(t, func() bool {
		st, err := ctl.Status(context.Background())
		if err != nil {
			return false
		}
		for _, m := range st.Members {
			if m.Live {
				return false
			}
		}
		return true
	}, 10*time.Second, 20*time.Millisecond)
}

func TestNotAtLegacy(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctl, err := control.New(tg.Client, "moved")
	require.NoError(t, err)
	_, err = ctl.Init(context.Background(), true)
	require.NoError(t, err)
	_, err = ctl.Advance(context.Background(), false)
	require.NoError(t, err)
	sim, err := New(Config{Client: tg.Client, Fresh: true, Namespace: "moved"})
	require.NoError(t, err)
	_, err = sim.Run(context.Background())
	require.ErrorContains(t, err, `namespace "moved" is at phase dual-write`)
}

func TestConfig(t *testing.T) {
	tg := locktest.Single(t)[0]
	c := tg.Client
	for name, cfg := range map[string]Config{
		"no client":      {},
		"java":           {Client: c, JavaWorkers: -1},
		"too many java":  {Client: c, JavaWorkers: MaxWorkers + 1},
		"go":             {Client: c, GoWorkers: -2},
		"locks":          {Client: c, Locks: MaxLocks + 1},
		"lease":          {Client: c, Lease: time.Millisecond},
		"lease fraction": {Client: c, Lease: 100*time.Millisecond + 500*time.Microsecond},
		"hold":           {Client: c, Hold: time.Second},
		"quiet":          {Client: c, Quiet: -time.Second},
		"duration":       {Client: c, Duration: time.Second},
		"namespace":      {Client: c, Namespace: "a{b}"},
		"nojava":         {Client: c, NoJava: true, JavaWorkers: 2},
	} {
		_, err := New(cfg)
		assert.Error(t, err, name)
	}
	sim, err := New(Config{Client: c})
	require.NoError(t, err)
	snap := sim.Snapshot()
	assert.Equal(t, migrate.PhaseLegacy, snap.Phase)
	assert.Len(t, snap.Workers, DefaultJavaWorkers+DefaultGoWorkers)
	assert.Equal(t, []string{"fleetsim:lock:0", "fleetsim:lock:1", "fleetsim:lock:2"}, sim.Names())
	assert.InDelta(t, float64(DefaultDuration-DefaultQuiet)/float64(2+6+5+6), float64(snap.Step),
		float64(time.Millisecond))
	sim, err = New(Config{Client: c, NoJava: true})
	require.NoError(t, err)
	assert.Len(t, sim.Snapshot().Workers, DefaultGoWorkers)
	assert.False(t, errors.Is(err, context.Canceled))
}

func TestCleanup(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := context.Background()
	dbsize := func() int64 {
		n, err := tg.Client.Do(ctx, "DBSIZE")
		require.NoError(t, err)
		return n.(int64)
	}
	sim, err := New(Config{Client: tg.Client, Fresh: true, Namespace: "clean", Duration: 2 * time.Second,
		Quiet: 200 * time.Millisecond, GoWorkers: 2, Heartbeat: 50 * time.Millisecond})
	require.NoError(t, err)
	_, err = sim.Run(ctx)
	require.NoError(t, err)
	assert.Positive(t, dbsize())
	require.NoError(t, sim.Cleanup(ctx))
	assert.Zero(t, dbsize(), "a run leaves nothing behind after Cleanup")

	// A namespace Run refused is never cleaned up: it is not the run's.
	ctl, err := control.New(tg.Client, "theirs")
	require.NoError(t, err)
	_, err = ctl.Init(ctx, true)
	require.NoError(t, err)
	_, err = ctl.Advance(ctx, false)
	require.NoError(t, err)
	sim, err = New(Config{Client: tg.Client, Fresh: true, Namespace: "theirs"})
	require.NoError(t, err)
	_, err = sim.Run(ctx)
	require.Error(t, err)
	require.NoError(t, sim.Cleanup(ctx))
	p, err := ctl.Phase(ctx)
	require.NoError(t, err)
	assert.Equal(t, migrate.PhaseDualWrite, p)
}

func TestFoldBlockers(t *testing.T) {
	lag := func(id string, p migrate.Phase) control.Blocker {
		return control.Blocker{Kind: control.BlockClientPhase, Member: id, Phase: p,
			Text: fmt.Sprintf("client %q runs %v, the fleet is at dual-write", id, p)}
	}
	quiet := control.Blocker{Kind: control.BlockQuietPeriod,
		Text: "the fleet has run dual-write for 0s, less than the quiet period 1s"}
	in := []control.Blocker{lag("a-1-x", migrate.PhaseLegacy), lag("b", migrate.PhaseLegacy), lag("c",
		migrate.PhaseDualRead), quiet}
	assert.Equal(t, []string{
		"2 clients run legacy, the fleet is at dual-write",
		`client "c" runs dual-read, the fleet is at dual-write`,
		"the fleet has run dual-write for 0s, less than the quiet period 1s",
	}, foldBlockers(in, migrate.PhaseDualWrite))
	assert.Nil(t, foldBlockers(nil, migrate.PhaseDualWrite))
}
