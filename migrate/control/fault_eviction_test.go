package control

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	goredislib "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/driver/goredis"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/migrate"
)

// evictionBlocked asserts err is a refusal whose blockers include one of
// kind blockEviction, and returns its text.
func evictionBlocked(t *testing.T, err error) string {
	t.Helper()
	var ue *UnsafeStepError
	require.ErrorAs(t, err, &ue, "refused with the blockers: %v", err)
	require.ErrorIs(t, err, ErrUnsafeStep)
	for _, b := range ue.Blockers {
		if b.Kind == blockEviction {
			return b.Text
		}
	}
	t.Fatalf("no %q blocker in %v", blockEviction, ue.Blockers)
	return ""
}

// A legacy sighting (or a registry entry) that eviction took looks like a
// legacy locker never seen. Under every allkeys-* policy the controller
// refuses each unforced change — step, rollback, repair, init — and says
// why; under noeviction and the volatile-* policies (the namespace's keys
// carry no TTL) it judges as before.
func TestFaultStepRefusedWhileEvidenceMayBeEvicted(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := context.Background()
	for _, policy := range maxmemoryPolicies {
		t.Run(policy, func(t *testing.T) {
			locktest.Do(t, tg.Client, "CONFIG", "SET", "maxmemory-policy", "noeviction")
			ns := t.Name()
			ctl := initNS(t, tg.Client, ns, WithQuietPeriod(time.Millisecond))
			walk(t, ctl, migrate.PhaseDualWrite)
			backdate(t, ctl.s, time.Hour)
			locktest.Do(t, tg.Client, "CONFIG", "SET", "maxmemory-policy", policy)
			defer locktest.Do(t, tg.Client, "CONFIG", "SET", "maxmemory-policy", "noeviction")

			st, err := ctl.Status(ctx)
			require.NoError(t, err)
			evicts := strings.HasPrefix(policy, "allkeys-")
			assert.Equal(t, evicts, !st.Safe(), "blockers: %v", st.Blockers)
			_, err = ctl.Advance(ctx, false)
			if !evicts {
				require.NoError(t, err)
				_, err = ctl.Rollback(ctx, false)
				require.NoError(t, err)
				return
			}
			assert.Contains(t, evictionBlocked(t, err), "maxmemory-policy "+policy)
			_, err = ctl.Rollback(ctx, false)
			evictionBlocked(t, err)
			_, err = ctl.Repair(ctx, migrate.PhaseDualWrite, false)
			evictionBlocked(t, err)
			p, err := ctl.Phase(ctx)
			require.NoError(t, err)
			assert.Equal(t, migrate.PhaseDualWrite, p, "nothing changed")

			other := t.Name() + "-new"
			ctl2, err := New(tg.Client, other, WithInitSilence(time.Millisecond))
			require.NoError(t, err)
			_, err = ctl2.Init(ctx, false)
			evictionBlocked(t, err)

			step, err := ctl.Advance(ctx, true)
			require.NoError(t, err, "force still overrides, and says what it overrode")
			assert.Equal(t, blockEviction, step.Overridden[0].Kind)
		})
	}
}

// A controller whose user may not run INFO cannot tell the policy: it
// refuses, saying so, unless the operator declares the policy — and what
// the server reports, when it can, overrides a declaration.
func TestFaultStepRefusedWhenThePolicyCannotBeRead(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := context.Background()
	ns := t.Name()
	ctl := initNS(t, tg.Client, ns)
	locktest.Do(t, tg.Client, "ACL", "SETUSER", "noinfo", "on", ">secret", "~*", "&*", "+@all", "-info")
	rc := goredislib.NewClient(&goredislib.Options{Addr: tg.Server.Addr(), Username: "noinfo", Password: "secret",
		MaxRetries: -1})
	t.Cleanup(func() { _ = rc.Close() })
	c := goredis.New(rc)

	blind, err := New(c, ns)
	require.NoError(t, err)
	_, err = blind.Advance(ctx, false)
	assert.Contains(t, evictionBlocked(t, err), "cannot tell whether the server evicts keys")

	declared, err := New(c, ns, WithMaxmemoryPolicy("noeviction"))
	require.NoError(t, err)
	_, err = declared.Advance(ctx, false)
	require.NoError(t, err, "the operator declared the policy the server cannot report")

	locktest.Do(t, tg.Client, "CONFIG", "SET", "maxmemory-policy", "allkeys-lru")
	defer locktest.Do(t, tg.Client, "CONFIG", "SET", "maxmemory-policy", "noeviction")
	wrong, err := New(tg.Client, ns, WithMaxmemoryPolicy("noeviction"))
	require.NoError(t, err)
	_, err = wrong.Rollback(ctx, false)
	assert.Contains(t, evictionBlocked(t, err), "the server reports maxmemory-policy allkeys-lru")
	_ = ctl
}

// Evidence with a TTL can expire, and volatile-* policies evict it: a key
// of the namespace that carries one is refused on, whatever the policy.
func TestFaultStepRefusedWhileEvidenceHasATTL(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := context.Background()
	ns := t.Name()
	ctl := initNS(t, tg.Client, ns, WithQuietPeriod(time.Millisecond))
	walk(t, ctl, migrate.PhaseDualWrite)
	backdate(t, ctl.s, time.Hour)
	require.NoError(t, ctl.s.recordSighting(ctx, "someone's:legacy:key"))
	locktest.Do(t, tg.Client, "HSET", ctl.s.k.Sighting, "at", "1") // seen long ago: not itself a blocker
	locktest.Do(t, tg.Client, "HSET", ctl.s.k.Meta, "sighting-at", "1")
	locktest.Do(t, tg.Client, "PEXPIRE", ctl.s.k.Sighting, "600000")
	_, err := ctl.Advance(ctx, false)
	assert.Contains(t, evictionBlocked(t, err), ctl.s.k.Sighting)
	locktest.Do(t, tg.Client, "PERSIST", ctl.s.k.Sighting)
	_, err = ctl.Advance(ctx, false)
	require.NoError(t, err)
}

// The review's finding under real eviction pressure: allkeys-lru, the
// fleet at dual-write, a legacy-only locker seen (its sighting blocks the
// step), other data filling memory while a follower's heartbeats keep the
// phase and the registry hot. Eviction takes the sighting; the controller
// must still refuse the step to dual-read, which would let the Java locker
// and a dual-read follower hold one lock at once.
//
// Which key LRU eviction takes is sampled: when it takes the phase key as
// well, the round shows nothing about the sighting and is run again.
func TestFaultEvictedSightingDoesNotLetTheControllerStep(t *testing.T) {
	tg := locktest.Single(t)[0]
	for round := 1; !evictedSightingRound(t, tg, fmt.Sprintf("%s-%d", t.Name(), round)); round++ {
		require.Less(t, round, 3, "eviction took the phase key with the sighting in every round")
	}
}

// evictedSightingRound runs the scenario in namespace ns; false when
// eviction took the phase key too (the controller can then read no phase,
// which is refused elsewhere).
func evictedSightingRound(t *testing.T, tg locktest.Target, ns string) bool {
	ctx := context.Background()
	ctl := initNS(t, tg.Client, ns, WithQuietPeriod(time.Minute))
	walk(t, ctl, migrate.PhaseDualWrite)
	backdate(t, ctl.s, time.Hour)
	follower := migrate.New(tg.Client, migrate.WithPhaseFrom(ns), migrate.WithPhaseInterval(10*time.Millisecond))
	defer func() { _ = follower.Close(ctx) }()
	_, err := follower.Phase(ctx)
	require.NoError(t, err)
	require.NoError(t, ctl.s.recordSighting(ctx, "orders:7"))
	_, err = ctl.Advance(ctx, false)
	require.ErrorIs(t, err, ErrUnsafeStep, "the sighting blocks the step")
	// Nothing touches the sighting now, while the follower's heartbeats keep
	// the phase, the namespace hash and the registry hot: after a few
	// seconds (Redis' LRU clock counts whole seconds) it is the coldest key.
	time.Sleep(3 * time.Second)

	used := memoryUsed(t, tg.Client)
	locktest.Do(t, tg.Client, "CONFIG", "SET", "maxmemory-samples", "10")
	locktest.Do(t, tg.Client, "CONFIG", "SET", "maxmemory", fmt.Sprint(used+4<<20))
	locktest.Do(t, tg.Client, "CONFIG", "SET", "maxmemory-policy", "allkeys-lru")
	defer locktest.Do(t, tg.Client, "CONFIG", "SET", "maxmemory", "0")
	defer locktest.Do(t, tg.Client, "CONFIG", "SET", "maxmemory-policy", "noeviction")
	filler := strings.Repeat("x", 4<<10)
	evicted := false
	for i := 0; i < 20000 && !evicted; i++ {
		// What the heartbeats keep hot, kept hot here too: on a loaded
		// machine the follower's reads may lag the fill.
		locktest.Do(t, tg.Client, "GET", ctl.s.k.Phase)
		locktest.Do(t, tg.Client, "HGETALL", ctl.s.k.Meta)
		locktest.Do(t, tg.Client, "SET", fmt.Sprintf("filler:%s:%d", ns, i), filler)
		n, _ := locktest.Do(t, tg.Client, "EXISTS", ctl.s.k.Sighting).(int64)
		evicted = n == 0
	}
	require.True(t, evicted, "eviction took the sighting (else this test shows nothing)")
	if n, _ := locktest.Do(t, tg.Client, "EXISTS", ctl.s.k.Phase).(int64); n != 1 {
		t.Logf("%s: eviction took the phase key too", ns)
		return false
	}

	_, err = ctl.Advance(ctx, false)
	evictionBlocked(t, err)
	p, err := ctl.Phase(ctx)
	if err == nil {
		assert.Equal(t, migrate.PhaseDualWrite, p, "never stepped past the Java locker")
	} else {
		assert.True(t, errors.Is(err, migrate.ErrPhaseUnknown), "%v", err)
	}
	return true
}

func memoryUsed(t *testing.T, c driver.Client) int64 {
	t.Helper()
	info, _ := locktest.Do(t, c, "INFO", "memory").(string)
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, "used_memory:"); ok {
			var n int64
			_, err := fmt.Sscan(v, &n)
			require.NoError(t, err)
			return n
		}
	}
	t.Fatalf("no used_memory in INFO memory")
	return 0
}

// The sighting's time is kept in the namespace hash too, which every
// heartbeat reads: the sighting hash gone alone (evicted, deleted) still
// blocks the step past dual-write.
func TestFaultSightingHashLostAloneStillBlocks(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := context.Background()
	ns := t.Name()
	ctl := initNS(t, tg.Client, ns, WithQuietPeriod(time.Minute))
	walk(t, ctl, migrate.PhaseDualWrite)
	backdate(t, ctl.s, time.Hour)
	require.NoError(t, ctl.s.recordSighting(ctx, "orders:7"))
	_, err := tg.Client.Del(ctx, ctl.s.k.Sighting)
	require.NoError(t, err)
	_, err = ctl.Advance(ctx, false)
	var ue *UnsafeStepError
	require.ErrorAs(t, err, &ue)
	assert.Contains(t, kinds(ue.Blockers), blockSighting)
}

// A namespace hash gone while the mark shows the controller set phases is
// evidence lost: the controller refuses to step until it is repaired.
func TestFaultNamespaceHashLostBlocksTheStep(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := context.Background()
	ns := t.Name()
	ctl := initNS(t, tg.Client, ns)
	_, err := tg.Client.Del(ctx, ctl.s.k.Meta)
	require.NoError(t, err)
	_, err = ctl.Advance(ctx, false)
	var ue *UnsafeStepError
	require.ErrorAs(t, err, &ue)
	assert.Contains(t, kinds(ue.Blockers), blockPhaseUnknown)
	_, err = ctl.Repair(ctx, migrate.PhaseLegacy, false)
	require.NoError(t, err)
	// A restore brings back the phase, not the evidence: an unforced step
	// waits the init silence (1 ms here) after it.
	time.Sleep(10 * time.Millisecond)
	_, err = ctl.Advance(ctx, false)
	require.NoError(t, err)
}
