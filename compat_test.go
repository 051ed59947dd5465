package lockbridge_test

// The cross-scheme exclusion matrix: who must exclude whom when a mixed fleet
// locks one name. Every locker here contends on the same lock name on a real
// redis-server, through both adapters, and a guard counter INCR'd inside the
// critical section records any overlap.
//
//   - Pairs that must exclude — the same scheme, neighbouring migrate phases,
//     dual-write with modern, and the Java seed replay with legacy and
//     dual-write — show zero overlaps, and every participant acquires.
//   - The unsafe pairs — a legacy-phase locker (the seed replay included:
//     every Java service is one) beside dual-read or modern — are run too,
//     and the checker must SEE overlaps there: it proves the checker can
//     fail, and why control.Controller never lets the fleet pass dual-write
//     while a legacy locker lives.

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/internal/testing/javareplay"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/legacy"
	"github.com/lockbridge/lockbridge/migrate"
	"github.com/lockbridge/lockbridge/modern"
)

// participant is one kind of locker in the matrix. class is the migrate
// phase whose keys it reads and writes.
type participant struct {
	name  string
	class migrate.Phase
	// lock takes the lock name for lease, waiting; it returns the release.
	lock func(ctx context.Context, c driver.Client, name string, lease time.Duration) (func(context.Context) error, error)
}

// lockerParticipant adapts a lockbridge.Locker; key maps the name to the
// key that locker is given.
func lockerParticipant(name string, class migrate.Phase, mk func(driver.Client) lockbridge.Locker,
	key func(string) string) participant {
	return participant{name: name, class: class, lock: func(ctx context.Context, c driver.Client, n string,
		lease time.Duration) (func(context.Context) error, error) {
		lk, err := mk(c).Lock(ctx, key(n), lease)
		if err != nil {
			return nil, err
		}
		return lk.Unlock, nil
	}}
}

func same(s string) string { return s }

func modernKey(s string) string {
	k, err := migrate.DeriveModernKey(s)
	if err != nil {
		panic(err)
	}
	return k
}

// seedParticipant replays the Java seed's lock() and time-checked unlock(),
// polling faster than the Java 100 ms so the test stays short (the poll
// interval is not part of the protocol).
var seedParticipant = participant{name: "seed", class: migrate.PhaseLegacy,
	lock: func(ctx context.Context, c driver.Client, n string, lease time.Duration) (func(context.Context) error, error) {
		for {
			exp, ok, err := javareplay.Lock(ctx, c, n, lease, nil)
			if err != nil {
				return nil, err
			}
			if ok {
				return func(ctx context.Context) error { return javareplay.Unlock(ctx, c, n, exp, nil) }, nil
			}
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(2 * time.Millisecond):
			}
		}
	}}

func participants() []participant {
	fast := lockbridge.LinearBackoff(time.Millisecond, 2*time.Millisecond)
	mig := func(p migrate.Phase) participant {
		return lockerParticipant("migrate-"+p.String(), p, func(c driver.Client) lockbridge.Locker {
			return migrate.New(c, migrate.WithPhase(p), migrate.WithBackoff(fast))
		}, same)
	}
	return []participant{
		lockerParticipant("legacy-atomic", migrate.PhaseLegacy, func(c driver.Client) lockbridge.Locker {
			return legacy.New(c, legacy.WithBackoff(fast))
		}, same),
		lockerParticipant("legacy-classic", migrate.PhaseLegacy, func(c driver.Client) lockbridge.Locker {
			return legacy.New(c, legacy.WithClassic(), legacy.WithBackoff(fast))
		}, same),
		seedParticipant,
		lockerParticipant("modern", migrate.PhaseModern, func(c driver.Client) lockbridge.Locker {
			return modern.New(c, modern.WithBackoff(fast))
		}, modernKey),
		mig(migrate.PhaseLegacy),
		mig(migrate.PhaseDualWrite),
		mig(migrate.PhaseDualRead),
		mig(migrate.PhaseModern),
	}
}

// result of one contention run.
type result struct {
	acquired   map[string]int64
	violations int64
}

// contendAll is contend, repeated (at most ten rounds) until every
// participant has acquired at least once: a loaded machine may starve one
// for a short round, which says nothing about exclusion.
func contendAll(t *testing.T, c driver.Client, name string, ps []participant, workers int, d,
	hold time.Duration) result {
	t.Helper()
	total := result{acquired: map[string]int64{}}
	for round := 0; round < 10; round++ {
		r := contend(t, c, name, ps, workers, d, hold)
		total.violations += r.violations
		all := true
		for _, p := range ps {
			total.acquired[p.name] += r.acquired[p.name]
			all = all && total.acquired[p.name] > 0
		}
		if all {
			break
		}
	}
	return total
}

// contend runs workers goroutines of each participant on one name for d;
// each repeatedly locks, holds for hold inside the guard, and unlocks.
func contend(t *testing.T, c driver.Client, name string, ps []participant, workers int, d, hold time.Duration) result {
	t.Helper()
	guard := locktest.NewGuard(c, name)
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var mu sync.Mutex
	res := result{acquired: map[string]int64{}}
	var wg sync.WaitGroup
	var failed atomic.Value
	for _, p := range ps {
		for i := 0; i < workers; i++ {
			wg.Add(1)
			go func(p participant) {
				defer wg.Done()
				for ctx.Err() == nil {
					unlock, err := p.lock(ctx, c, name, time.Second)
					if err != nil {
						// Errors at the end of the run come from its deadline
						// (a dial or read cut short), whatever their form.
						dl, _ := ctx.Deadline()
						if time.Until(dl) > 50*time.Millisecond && !errors.Is(err, lockbridge.ErrNotObtained) {
							failed.Store(fmt.Errorf("%s: %w", p.name, err))
						}
						return
					}
					guard.Hold(t, hold)
					mu.Lock()
					res.acquired[p.name]++
					mu.Unlock()
					_ = unlock(context.Background()) // a seed unlock after an overlap may find nothing; fine
				}
			}(p)
		}
	}
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		t.Fatalf("a worker failed: %v", err)
	}
	res.violations = guard.Violations()
	return res
}

// overlap lets first take the lock and, while it holds, second: it returns
// the guard's violations (1 when second got in beside first).
func overlap(t *testing.T, c driver.Client, name string, first, second participant) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	guard := locktest.NewGuard(c, name)
	u1, err := first.lock(ctx, c, name, 5*time.Second)
	require.NoError(t, err)
	guard.Enter(t)
	u2, err := second.lock(ctx, c, name, 5*time.Second)
	require.NoError(t, err, "%s waited for %s: they excluded each other", second.name, first.name)
	guard.Enter(t)
	guard.Exit(t)
	guard.Exit(t)
	_ = u2(ctx)
	_ = u1(ctx)
	return guard.Violations()
}

func TestCompatMatrix(t *testing.T) {
	ps := participants()
	locktest.Run(t, locktest.All(t), func(t *testing.T, tg locktest.Target) {
		for i := range ps {
			for j := i; j < len(ps); j++ {
				a, b, self := ps[i], ps[j], i == j
				safe := migrate.Compatible(a.class, b.class)
				t.Run(a.name+"+"+b.name, func(t *testing.T) {
					t.Parallel()
					name := locktest.Key(t, "lock")
					pair := []participant{a, b}
					if self {
						pair = []participant{a}
					}
					if safe {
						res := contendAll(t, tg.Client, name, pair, 4, 400*time.Millisecond, time.Millisecond)
						assert.Zero(t, res.violations, "%s and %s must exclude each other", a.name, b.name)
						for _, p := range pair {
							assert.Positive(t, res.acquired[p.name], "%s never acquired", p.name)
						}
						return
					}
					// The unsafe direction, made certain: the holder that writes
					// nothing a legacy locker reads goes first.
					first, second := a, b
					if first.class == migrate.PhaseLegacy {
						first, second = b, a
					}
					assert.Positive(t, overlap(t, tg.Client, name, first, second),
						"%s (%v) beside %s (%v) is an unsafe pair: the checker must see the overlap", first.name, first.class,
						second.name, second.class)
				})
			}
		}
	})
}

func TestCompatMatrixCoversThePhasePairs(t *testing.T) {
	// Every pair of phases, by class: neighbours exclude each other, and so do
	// dual-write and modern; legacy beside dual-read or modern does not.
	L, W, R, M := migrate.PhaseLegacy, migrate.PhaseDualWrite, migrate.PhaseDualRead, migrate.PhaseModern
	for _, pair := range [][2]migrate.Phase{{L, L}, {L, W}, {W, W}, {W, R}, {R, R}, {R, M}, {M, M}, {W, M}} {
		require.True(t, migrate.Compatible(pair[0], pair[1]), "%v+%v", pair[0], pair[1])
	}
	for _, pair := range [][2]migrate.Phase{{L, R}, {L, M}} {
		require.False(t, migrate.Compatible(pair[0], pair[1]), "%v+%v", pair[0], pair[1])
	}
}

// jdkLong1700000000001 is java.lang.Long 1700000000001 as Spring's default
// RedisTemplate (JdkSerializationRedisSerializer) writes it: 82 bytes, as
// OpenJDK 17's ObjectOutputStream produces them.
const jdkLong1700000000001 = "aced0005737200" + "0e6a6176612e6c616e672e4c6f6e67" + "3b8be490cc8f23df" +
	"0200014a000576616c7565" +
	"787200106a6176612e6c616e672e4e756d62657286ac951d0b94e08b020000" + "7870" + "0000018bcfe56801"

// TestCompatGoldenBytes pins what each phase writes for a Spring-default
// Java fleet: a JDK-serialized String key and a JDK-serialized Long value.
func TestCompatGoldenBytes(t *testing.T) {
	want, err := hex.DecodeString(jdkLong1700000000001)
	require.NoError(t, err)
	require.Len(t, want, 82)
	legacyKey := "\xac\xed\x00\x05t\x00\x0alock:order"
	// W = now + lease + 1 = 1700000000001 for a 1 s lease.
	clock := func() time.Time { return time.UnixMilli(1_700_000_000_001 - 1000 - 1) }
	locktest.Run(t, locktest.All(t), func(t *testing.T, tg locktest.Target) {
		ctx := context.Background()
		for _, p := range []migrate.Phase{migrate.PhaseLegacy, migrate.PhaseDualWrite, migrate.PhaseDualRead,
			migrate.PhaseModern} {
			t.Run(p.String(), func(t *testing.T) {
				l := migrate.New(tg.Client, migrate.WithPhase(p), migrate.WithLegacy(
					legacy.WithClock(clock), legacy.WithKeyCodec(legacy.KeyJavaString), legacy.WithValueCodec(legacy.ValueJavaLong)))
				lk, err := l.TryLock(ctx, "lock:order", time.Second)
				require.NoError(t, err)
				defer func() {
					// The clock stands years behind the server's: a legacy
					// release is refused by the server-clock guard and
					// leaves the value, so the keys are deleted here.
					_ = lk.Unlock(ctx)
					_, err := tg.Client.Do(ctx, "DEL", legacyKey, "{"+legacyKey+"}:modern")
					require.NoError(t, err)
				}()
				lkey, mkey, err := l.Keys("lock:order")
				require.NoError(t, err)
				assert.Equal(t, legacyKey, lkey)
				assert.Equal(t, "{"+legacyKey+"}:modern", mkey)

				v, ok, err := tg.Client.Get(ctx, legacyKey)
				require.NoError(t, err)
				assert.Equal(t, p == migrate.PhaseLegacy || p == migrate.PhaseDualWrite, ok)
				if ok {
					assert.Equal(t, hex.EncodeToString(want), hex.EncodeToString([]byte(v)), "the Java side's exact bytes")
				}
				m, ok, err := tg.Client.Get(ctx, mkey)
				require.NoError(t, err)
				assert.Equal(t, p >= migrate.PhaseDualWrite, ok)
				if ok {
					assert.Equal(t, lk.Token(), m)
					assert.Regexp(t, `^[A-Za-z0-9_-]{22}$`, m, "16 random bytes, unpadded base64url")
				}
			})
		}
	})
}
