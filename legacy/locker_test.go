package legacy_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/internal/protocol/legacyproto"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/legacy"
)

var modes = []legacyproto.Mode{legacyproto.ModeAtomic, legacyproto.ModeClassic}

// behaviour is one behaviour test, run on every target.
type behaviour struct {
	name string
	fn   func(t *testing.T, tg locktest.Target)
}

// TestLocker runs every behaviour on go-redis and redigo against one
// redis-server, and on go-redis against a 3-master cluster, the three
// targets in parallel.
func TestLocker(t *testing.T) {
	t.Parallel()
	all := append(append(append([]behaviour{}, lockerBehaviours...), windowBehaviours...), seedBehaviours...)
	locktest.Run(t, locktest.All(t), func(t *testing.T, tg locktest.Target) {
		t.Parallel()
		for _, b := range all {
			t.Run(b.name, func(t *testing.T) { b.fn(t, tg) })
		}
	})
}

var lockerBehaviours = []behaviour{
	{"AcquireRelease", testAcquireRelease},
	{"TakeoverExpiredNotLive", testTakeoverExpiredNotLive},
	{"ForeignValuesKept", testForeignValuesKept},
	{"WrongType", testWrongType},
	{"GoldenBytesStored", testGoldenBytesStored},
	{"LongJavaKey", testLongJavaKey},
	{"Refresh", testRefresh},
	{"SafetyTTL", testSafetyTTL},
	{"LockWaitsForExpiry", testLockWaitsForExpiry},
	{"LockDeadline", testLockDeadline},
	{"RoundTrips", testRoundTrips},
}

func testAcquireRelease(t *testing.T, tg locktest.Target) {
	for _, mode := range modes {
		t.Run(mode.String(), func(t *testing.T) {
			ctx := locktest.Ctx(t)
			key := locktest.Key(t, "k")
			lk := legacy.New(tg.Client, legacyproto.WithMode(mode))
			before := time.Now()
			l, err := lk.TryLock(ctx, key, time.Minute)
			require.NoError(t, err)
			ll := l.(*legacy.Lock)

			stored, ok := locktest.Get(t, tg.Client, key)
			require.True(t, ok)
			assert.Equal(t, ll.Value(), stored, "the stored bytes are the value we wrote")
			assert.Equal(t, l.Token(), stored, "decimal: the token is the stored value")
			assert.Equal(t, key, l.Key())
			assert.Equal(t, key, legacy.RedisKeyOf(ll))
			w := legacy.ExpiryOf(ll)
			assert.GreaterOrEqual(t, w, before.UnixMilli()+60_000+1)
			assert.LessOrEqual(t, w, time.Now().UnixMilli()+60_000+1)
			assert.Equal(t, time.UnixMilli(w), l.ExpiresAt())
			assert.Equal(t, int64(-1), locktest.PTTL(t, tg.Client, key), "like the Java side: no TTL")
			assert.NoError(t, l.Err())
			select {
			case <-l.Done():
				t.Fatal("Done closed while held")
			default:
			}

			// Held: a second locker, of either mode, is refused.
			for _, m := range modes {
				_, err = legacy.New(tg.Client, legacyproto.WithMode(m)).TryLock(ctx, key, time.Minute)
				require.ErrorIs(t, err, lockbridge.ErrNotObtained)
				assert.False(t, errors.As(err, new(*legacy.ForeignValueError)))
				assert.True(t, strings.HasPrefix(err.Error(), "legacy: "), err.Error())
			}
			v, _ := locktest.Get(t, tg.Client, key)
			assert.Equal(t, stored, v, "a refused attempt writes nothing")

			require.NoError(t, l.Unlock(ctx))
			_, ok = locktest.Get(t, tg.Client, key)
			assert.False(t, ok, "released: the key is gone")
			<-l.Done()
			assert.NoError(t, l.Err(), "a clean Unlock")
			assert.ErrorIs(t, l.Unlock(ctx), lockbridge.ErrNotHeld)
			assert.ErrorIs(t, l.Refresh(ctx, time.Minute), lockbridge.ErrNotHeld)
			assert.NoError(t, l.Err())

			// Free again.
			l, err = lk.TryLock(ctx, key, time.Minute)
			require.NoError(t, err)
			require.NoError(t, l.Unlock(ctx))
		})
	}
}

// A stored expired Java value is taken over, a live one is not, for every
// value codec and both modes; expiry is strict (stored < now).
func testTakeoverExpiredNotLive(t *testing.T, tg locktest.Target) {
	const now = 1700000000000
	for _, mode := range modes {
		for _, codec := range legacy.ValueCodecs() {
			t.Run(mode.String()+"/"+codec.String(), func(t *testing.T) {
				ctx := locktest.Ctx(t)
				key := locktest.Key(t, "k")
				lk := legacy.New(tg.Client, legacyproto.WithMode(mode), legacy.WithValueCodec(codec),
					legacy.WithClock(locktest.At(time.UnixMilli(now))))
				for _, live := range []int64{now, now + 1, now + 60_000} {
					locktest.Set(t, tg.Client, key, codec.Encode(live))
					_, err := lk.TryLock(ctx, key, time.Second)
					require.ErrorIs(t, err, lockbridge.ErrNotObtained, "live %d at %d", live, now)
					assert.Contains(t, err.Error(), fmt.Sprintf("held until %s (%d)",
						time.UnixMilli(live).UTC().Format(time.RFC3339Nano), live))
					v, _ := locktest.Get(t, tg.Client, key)
					assert.Equal(t, codec.Encode(live), v, "a live value is never overwritten")
				}
				for _, expired := range []int64{now - 1, 1, -5} {
					locktest.Set(t, tg.Client, key, codec.Encode(expired))
					l, err := lk.TryLock(ctx, key, time.Second)
					require.NoError(t, err, "expired %d at %d", expired, now)
					v, _ := locktest.Get(t, tg.Client, key)
					assert.Equal(t, codec.Encode(now+1000+1), v)
					assert.Equal(t, l.(*legacy.Lock).Value(), v)
				}
			})
		}
	}
}

// foreignValues are values some other scheme wrote (a UUID-prefixed value
// as the jedis-lock master branch writes, and the like): they never decode
// as a decimal, so nobody takes them over.
var foreignValues = []string{
	"3f2504e0-4f89-11d3-9a0c-0305e82c3301:1700000000001", // jedis-lock master
	"1350000060.0", "1390000060.123456", "1.7E12", // redis-py, redis-mutex
	`["java.lang.Long",1700000000001]`, `"1700000000001"`, // Jackson
	"1700000061-4242", "1700000061:4242", // gem redis-lock, PredisLock
	"", " 1700000000001", "1700000000001\n", "9223372036854775808", "١٢٣",
	"\xac\xed\x00\x05\x74\x00\x0d1700000000001", // a JDK String, read as decimal
}

func testForeignValuesKept(t *testing.T, tg locktest.Target) {
	for _, mode := range modes {
		t.Run(mode.String(), func(t *testing.T) {
			ctx := locktest.Ctx(t)
			key := locktest.Key(t, "k")
			// The clock is far ahead: any decodable value would be expired.
			lk := legacy.New(tg.Client, legacyproto.WithMode(mode), legacy.WithClock(locktest.Skewed(100*365*24*time.Hour)))
			for _, v := range foreignValues {
				locktest.Set(t, tg.Client, key, v)
				_, err := lk.TryLock(ctx, key, time.Second)
				require.ErrorIs(t, err, lockbridge.ErrNotObtained, "%q", v)
				var fe *legacy.ForeignValueError
				require.ErrorAs(t, err, &fe, "%q", v)
				assert.Equal(t, v, fe.Value)
				assert.Equal(t, len(v), fe.Size)
				assert.Equal(t, legacy.ValueDecimal, fe.Codec)
				assert.Contains(t, err.Error(), fmt.Sprintf("%q", v))
				stored, _ := locktest.Get(t, tg.Client, key)
				assert.Equal(t, v, stored, "a foreign value is kept")
			}
			// Lock waits on it like on a live value.
			sctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
			defer cancel()
			_, err := lk.Lock(sctx, key, time.Second)
			// Not obtained — or, when the deadline fell while an attempt
			// was on the wire, an unknown outcome: never a guess.
			assert.True(t, errors.Is(err, lockbridge.ErrNotObtained) || errors.Is(err, lockbridge.ErrUnknownOutcome), "%v", err)
			assert.ErrorIs(t, err, context.DeadlineExceeded)
			_, err = legacy.New(tg.Client, legacyproto.WithMode(mode), legacy.WithBackoff(lockbridge.NoRetry())).Lock(ctx, key,
				time.Second)
			assert.ErrorIs(t, err, lockbridge.ErrNotObtained)
			assert.ErrorAs(t, err, new(*legacy.ForeignValueError))

			// A large foreign value: the error keeps its first 1024 bytes
			// and its size (the script sends no more).
			big := "x" + strings.Repeat("\x00\xff", 5000)
			locktest.Set(t, tg.Client, key, big)
			_, err = lk.TryLock(ctx, key, time.Second)
			var fe *legacy.ForeignValueError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, big[:legacy.MaxForeignKept], fe.Value)
			assert.Equal(t, len(big), fe.Size)
			assert.Contains(t, err.Error(), "\"… (10001 bytes)")
			stored, _ := locktest.Get(t, tg.Client, key)
			assert.Equal(t, big, stored)

			// Under a binary codec, a decimal is foreign.
			locktest.Set(t, tg.Client, key, "1")
			_, err = legacy.New(tg.Client, legacyproto.WithMode(mode),
				legacy.WithValueCodec(legacy.ValueJavaLong)).TryLock(ctx, key,
				time.Second)
			require.ErrorAs(t, err, new(*legacy.ForeignValueError))
			stored, _ = locktest.Get(t, tg.Client, key)
			assert.Equal(t, "1", stored)
		})
	}
}

func testWrongType(t *testing.T, tg locktest.Target) {
	for _, mode := range modes {
		t.Run(mode.String(), func(t *testing.T) {
			ctx := locktest.Ctx(t)
			key := locktest.Key(t, "list")
			_, err := tg.Client.Do(ctx, "RPUSH", key, "x")
			require.NoError(t, err)
			lk := legacy.New(tg.Client, legacyproto.WithMode(mode))
			for _, try := range []func() (lockbridge.Lock, error){
				func() (lockbridge.Lock, error) { return lk.TryLock(ctx, key, time.Second) },
				func() (lockbridge.Lock, error) { return lk.Lock(ctx, key, time.Second) },
			} {
				l, err := try()
				assert.Nil(t, l)
				require.Error(t, err)
				assert.True(t, driver.HasPrefix(err, "WRONGTYPE"), "%v", err)
				assert.False(t, errors.Is(err, lockbridge.ErrNotObtained), "a Redis error is not 'held by another'")
				assert.False(t, errors.Is(err, lockbridge.ErrInvalid))
				assert.True(t, strings.HasPrefix(err.Error(), "legacy: lock "), err.Error())
				assert.Contains(t, err.Error(), "another type")
			}

			// A held lock whose key turns into a list: Refresh reports it.
			k2 := locktest.Key(t, "k2")
			l, err := lk.TryLock(ctx, k2, time.Minute)
			require.NoError(t, err)
			_, err = tg.Client.Do(ctx, "DEL", k2)
			require.NoError(t, err)
			_, err = tg.Client.Do(ctx, "RPUSH", k2, "x")
			require.NoError(t, err)
			err = l.Refresh(ctx, time.Minute)
			assert.True(t, driver.HasPrefix(err, "WRONGTYPE"), "%v", err)
			assert.False(t, errors.Is(err, lockbridge.ErrNotHeld))
			if mode == legacyproto.ModeAtomic {
				err = l.Unlock(ctx)
				assert.True(t, driver.HasPrefix(err, "WRONGTYPE"), "%v", err)
				assert.NoError(t, l.Err(), "a Redis error leaves the lock as it was")
			}
		})
	}
}

// What each profile stores, byte for byte (as the Java serializers write
// it) under a clock stopped so that now + 1 s + 1 = 1700000000001.
func testGoldenBytesStored(t *testing.T, tg locktest.Target) {
	now := time.UnixMilli(1699999999000)
	golden := map[legacy.ValueCodec]string{
		legacy.ValueDecimal:    hexDecimal,
		legacy.ValueJavaString: hexJavaString,
		legacy.ValueJavaLong:   hexJavaLong,
		legacy.ValueJSONString: hexJSONString,
		legacy.ValueJSONNumber: hexDecimal,
	}
	for _, mode := range modes {
		for _, codec := range legacy.ValueCodecs() {
			for _, kc := range []legacy.KeyCodec{legacy.KeyRaw, legacy.KeyJavaString} {
				t.Run(fmt.Sprintf("%v/%v/%v", mode, codec, kc), func(t *testing.T) {
					ctx := locktest.Ctx(t)
					name := locktest.Key(t, "lock:order")
					lk := legacy.New(tg.Client, legacyproto.WithMode(mode), legacy.WithValueCodec(codec), legacy.WithKeyCodec(kc),
						legacy.WithClock(locktest.At(now)))
					l, err := lk.TryLock(ctx, name, time.Second)
					require.NoError(t, err)
					assert.Equal(t, "1700000000001", l.Token())
					redisKey := name
					if kc == legacy.KeyJavaString {
						redisKey = "\xac\xed\x00\x05\x74" + string([]byte{byte(len(name) >> 8), byte(len(name))}) + name
					}
					assert.Equal(t, redisKey, legacy.RedisKeyOf(l.(*legacy.Lock)))
					stored, ok := locktest.Get(t, tg.Client, redisKey)
					require.True(t, ok, "the lock lives at the encoded key")
					assert.Equal(t, unhex(t, golden[codec]), stored)
					if kc == legacy.KeyJavaString {
						_, ok = locktest.Get(t, tg.Client, name)
						assert.False(t, ok, "not at the raw name")
					}
					_, err = tg.Client.Del(ctx, redisKey)
					require.NoError(t, err)
				})
			}
		}
	}
	// The seconds profile (redis.io recipe) and the profile without +1.
	for _, tc := range []struct {
		opts []legacy.Option
		now  time.Time
		ttl  time.Duration
		want string
	}{
		{[]legacy.Option{legacy.WithUnit(time.Second)}, time.Unix(1700000000, 500e6), time.Minute, "1700000061"},
		{[]legacy.Option{legacy.WithUnit(time.Second), legacy.WithPlusOne(false)}, time.Unix(1700000000, 0), time.Minute,
			"1700000060"},
		{[]legacy.Option{legacy.WithPlusOne(false)}, time.UnixMilli(1699999999000), time.Second, "1700000000000"},
		{[]legacy.Option{legacy.WithUnit(time.Second), legacy.WithValueCodec(legacy.ValueJavaLong)}, time.Unix(1700000000, 0),
			time.Minute,
			unhex(t, hexJavaLong[:len(hexJavaLong)-len("00 00 01 8b cf e5 68 01")]+"00 00 00 00 65 53 f1 3d")},
	} {
		for _, mode := range modes {
			ctx := locktest.Ctx(t)
			key := locktest.Key(t, "units")
			lk := legacy.New(tg.Client, append(tc.opts, legacyproto.WithMode(mode), legacy.WithClock(locktest.At(tc.now)))...)
			_, err := lk.TryLock(ctx, key, tc.ttl)
			require.NoError(t, err)
			stored, _ := locktest.Get(t, tg.Client, key)
			prof, err := legacyproto.NewProfile(tc.opts...)
			require.NoError(t, err)
			assert.Equal(t, tc.want, stored, "%v %v", prof, mode)
			_, err = tg.Client.Del(ctx, key)
			require.NoError(t, err)
			// A second under a seconds profile is one unit: less is invalid.
			if prof.Unit() == time.Second {
				_, err = lk.TryLock(ctx, key, 999*time.Millisecond)
				assert.ErrorIs(t, err, lockbridge.ErrInvalid)
			}
		}
	}
}

// A JDK-serialized key above 65535 bytes takes the TC_LONGSTRING form; the
// lock works on it like on any other key.
func testLongJavaKey(t *testing.T, tg locktest.Target) {
	ctx := locktest.Ctx(t)
	prefix := locktest.Key(t, "")
	name := prefix + strings.Repeat("k", 64<<10-len(prefix)) // exactly 64 KiB: the longest name accepted
	lk := legacy.New(tg.Client, legacy.WithKeyCodec(legacy.KeyJavaString))
	l, err := lk.TryLock(ctx, name, time.Minute)
	require.NoError(t, err)
	rk := legacy.RedisKeyOf(l.(*legacy.Lock))
	assert.Equal(t, "\xac\xed\x00\x05\x7c\x00\x00\x00\x00\x00\x01\x00\x00"+name, rk)
	_, ok := locktest.Get(t, tg.Client, rk)
	assert.True(t, ok)
	_, err = lk.TryLock(ctx, name, time.Minute)
	assert.ErrorIs(t, err, lockbridge.ErrNotObtained)
	require.NoError(t, l.Unlock(ctx))

	_, err = lk.TryLock(ctx, name+"k", time.Minute)
	assert.ErrorIs(t, err, lockbridge.ErrInvalid, "longer than 64 KiB")
	_, err = lk.TryLock(ctx, "\xff\xfe", time.Minute)
	assert.ErrorIs(t, err, lockbridge.ErrInvalid, "not a Java String")
}

func testRefresh(t *testing.T, tg locktest.Target) {
	for _, mode := range modes {
		t.Run(mode.String(), func(t *testing.T) {
			ctx := locktest.Ctx(t)
			key := locktest.Key(t, "k")
			lk := legacy.New(tg.Client, legacyproto.WithMode(mode), legacy.WithValueCodec(legacy.ValueJavaString))
			l, err := lk.TryLock(ctx, key, 10*time.Second)
			require.NoError(t, err)
			ll := l.(*legacy.Lock)
			w := legacy.ExpiryOf(ll)
			require.NoError(t, l.Refresh(ctx, time.Minute))
			assert.GreaterOrEqual(t, legacy.ExpiryOf(ll), w+50_000)
			stored, _ := locktest.Get(t, tg.Client, key)
			assert.Equal(t, legacy.ValueJavaString.Encode(legacy.ExpiryOf(ll)), stored, "the new expiry, in the codec's bytes")
			assert.Equal(t, ll.Value(), stored)
			assert.Equal(t, fmt.Sprint(legacy.ExpiryOf(ll)), l.Token())

			// After a losing contender's GETSET (a value near ours), Refresh
			// still recognises the lock and rewrites our value.
			_, _, err = tg.Client.GetSet(ctx, key, legacy.ValueJavaString.Encode(legacy.ExpiryOf(ll)+5))
			require.NoError(t, err)
			require.NoError(t, l.Refresh(ctx, 2*time.Minute))
			stored, _ = locktest.Get(t, tg.Client, key)
			assert.Equal(t, ll.Value(), stored)

			_, err = lk.TryLock(ctx, key, time.Second)
			assert.ErrorIs(t, err, lockbridge.ErrNotObtained)
			assert.ErrorIs(t, l.Refresh(ctx, 0), lockbridge.ErrInvalid)
			assert.ErrorIs(t, l.Refresh(ctx, 999*time.Microsecond), lockbridge.ErrInvalid)

			// Gone: Refresh says so, and the lock is lost.
			_, err = tg.Client.Del(ctx, key)
			require.NoError(t, err)
			err = l.Refresh(ctx, time.Minute)
			require.ErrorIs(t, err, lockbridge.ErrNotHeld)
			assert.Contains(t, err.Error(), "the key is gone")
			<-l.Done()
			assert.ErrorIs(t, l.Err(), lockbridge.ErrLost)
			_, ok := locktest.Get(t, tg.Client, key)
			assert.False(t, ok, "a refresh of a lost lock writes nothing")
			assert.ErrorIs(t, l.Unlock(ctx), lockbridge.ErrNotHeld)
		})
	}
}

func testSafetyTTL(t *testing.T, tg locktest.Target) {
	for _, mode := range modes {
		t.Run(mode.String(), func(t *testing.T) {
			ctx := locktest.Ctx(t)
			key := locktest.Key(t, "k")
			lk := legacy.New(tg.Client, legacyproto.WithMode(mode), legacy.WithSafetyTTL(20*time.Second))
			_, err := lk.TryLock(ctx, key, 11*time.Second)
			assert.ErrorIs(t, err, lockbridge.ErrInvalid, "the safety TTL must be at least twice the lease")
			_, err = lk.Lock(ctx, key, 11*time.Second)
			assert.ErrorIs(t, err, lockbridge.ErrInvalid)

			l, err := lk.TryLock(ctx, key, 5*time.Second)
			require.NoError(t, err)
			ttl := locktest.PTTL(t, tg.Client, key)
			assert.True(t, ttl > 15000 && ttl <= 20000, "PTTL %d", ttl)
			_, err = tg.Client.Do(ctx, "PERSIST", key)
			require.NoError(t, err)
			require.NoError(t, l.Refresh(ctx, 10*time.Second))
			ttl = locktest.PTTL(t, tg.Client, key)
			assert.True(t, ttl > 15000 && ttl <= 20000, "refresh sets it again: PTTL %d", ttl)
			assert.ErrorIs(t, l.Refresh(ctx, 11*time.Second), lockbridge.ErrInvalid)
			require.NoError(t, l.Unlock(ctx))

			// A takeover sets it too; a Java GETSET wipes it.
			locktest.Set(t, tg.Client, key, "1")
			_, err = lk.TryLock(ctx, key, 5*time.Second)
			require.NoError(t, err)
			assert.Greater(t, locktest.PTTL(t, tg.Client, key), int64(15000))
			_, _, err = tg.Client.GetSet(ctx, key, "2")
			require.NoError(t, err)
			assert.Equal(t, int64(-1), locktest.PTTL(t, tg.Client, key))
		})
	}
}

// Lock never sleeps past the holder's expiry it has just read: with a
// backoff of an hour, a waiter still takes over a crashed holder's lock as
// soon as its lease ends, and not before.
func testLockWaitsForExpiry(t *testing.T, tg locktest.Target) {
	for _, holderMode := range modes {
		for _, mode := range modes {
			t.Run(holderMode.String()+"/"+mode.String(), func(t *testing.T) {
				ctx := locktest.Ctx(t)
				key := locktest.Key(t, "k")
				holder, err := legacy.New(tg.Client, legacyproto.WithMode(holderMode)).TryLock(ctx, key, 150*time.Millisecond)
				require.NoError(t, err)
				w := legacy.ExpiryOf(holder.(*legacy.Lock))
				// The holder crashes: it never unlocks.
				lk := legacy.New(tg.Client, legacyproto.WithMode(mode), legacy.WithBackoff(lockbridge.LinearBackoff(time.Hour,
					time.Hour)))
				l, err := lk.Lock(ctx, key, time.Minute)
				require.NoError(t, err)
				assert.Greater(t, time.Now().UnixMilli(), w, "taken over only once the holder's lease ended")
				stored, _ := locktest.Get(t, tg.Client, key)
				assert.Equal(t, l.(*legacy.Lock).Value(), stored)
				require.NoError(t, l.Unlock(ctx))
			})
		}
	}
}

func testLockDeadline(t *testing.T, tg locktest.Target) {
	ctx := locktest.Ctx(t)
	key := locktest.Key(t, "k")
	holder, err := legacy.New(tg.Client).TryLock(ctx, key, time.Minute)
	require.NoError(t, err)
	for _, mode := range modes {
		dctx, cancel := context.WithTimeout(ctx, 80*time.Millisecond)
		l, err := legacy.New(tg.Client, legacyproto.WithMode(mode)).Lock(dctx, key, time.Minute)
		cancel()
		assert.Nil(t, l)
		// The deadline falls in a wait, or (rarely) on an attempt on the
		// wire: an unknown outcome then, never a guess.
		assert.True(t, errors.Is(err, lockbridge.ErrNotObtained) || errors.Is(err, lockbridge.ErrUnknownOutcome), "%v", err)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
	}
	// NoRetry: one attempt.
	_, err = legacy.New(tg.Client, legacy.WithBackoff(lockbridge.NoRetry())).Lock(ctx, key, time.Minute)
	assert.ErrorIs(t, err, lockbridge.ErrNotObtained)
	// A context already ended: the Redis call fails with it, and Lock still
	// reports not obtained.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err = legacy.New(tg.Client).Lock(cctx, key, time.Minute)
	assert.ErrorIs(t, err, lockbridge.ErrNotObtained)
	assert.ErrorIs(t, err, context.Canceled)
	require.NoError(t, holder.Unlock(ctx))
}

// The commands each operation sends: in atomic mode the acquire script the
// first time, then SETNX for a free key (SET NX PX with a safety TTL), that
// and the acquire script for a taken one
// (an expired takeover: two round trips, where the Java scheme needs
// three), one round trip for a release; the literal Java sequence in
// classic mode.
func testRoundTrips(t *testing.T, tg locktest.Target) {
	ctx := locktest.Ctx(t)
	key := locktest.Key(t, "k")
	s := newSpy(tg.Client)
	atomic := legacy.New(s)
	classic := legacy.New(s, legacy.WithClassic())

	l, err := atomic.TryLock(ctx, key, time.Minute)
	require.NoError(t, err)
	require.NoError(t, l.Unlock(ctx))
	assert.Equal(t, []string{"EVAL legacy/scripts/acquire.lua", "EVAL legacy/scripts/release.lua"}, s.Commands(),
		"a Locker's first acquire: the script (is the user allowed scripts?)")
	l, err = atomic.TryLock(ctx, key, time.Minute)
	require.NoError(t, err)
	require.NoError(t, l.Unlock(ctx))
	assert.Equal(t, []string{"SETNX", "EVAL legacy/scripts/release.lua"}, s.Commands(), "later: SETNX for a free key")

	locktest.Set(t, tg.Client, key, "1")
	l, err = atomic.TryLock(ctx, key, time.Minute)
	require.NoError(t, err)
	assert.Equal(t, []string{"SETNX", "EVAL legacy/scripts/acquire.lua"}, s.Commands(),
		"an expired takeover: two round trips")
	require.NoError(t, l.Refresh(ctx, time.Minute))
	assert.Equal(t, []string{"EVAL legacy/scripts/refresh.lua"}, s.Commands())
	require.NoError(t, l.Unlock(ctx))
	s.Commands()

	l, err = classic.TryLock(ctx, key, time.Minute)
	require.NoError(t, err)
	require.NoError(t, l.Unlock(ctx))
	assert.Equal(t, []string{"SETNX", "DEL"}, s.Commands())

	locktest.Set(t, tg.Client, key, "1")
	l, err = classic.TryLock(ctx, key, time.Minute)
	require.NoError(t, err)
	assert.Equal(t, []string{"SETNX", "GET", "GETSET"}, s.Commands(), "the Java takeover: three round trips")
	require.NoError(t, l.Refresh(ctx, time.Minute))
	assert.Equal(t, []string{"GET", "GETSET"}, s.Commands())
	_, err = classic.TryLock(ctx, key, time.Minute)
	assert.ErrorIs(t, err, lockbridge.ErrNotObtained)
	assert.Equal(t, []string{"SETNX", "GET"}, s.Commands())
	require.NoError(t, l.Unlock(ctx))
}
