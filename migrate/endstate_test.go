package migrate

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/legacy"
	"github.com/lockbridge/lockbridge/modern"
)

// TestEndStateModernLockerJoins proves the end state docs/migration.md
// states: a plain modern.Locker on the key Locker.Keys names takes exactly
// the lock a migrate Locker takes at PhaseModern — same key, same token
// format, same TTL, the same scripts — so each excludes the other, each
// refuses to release or refresh the other's lock, and a release by either
// frees the lock for the other. Under contention a guard that is not the
// lock counts no overlap.
func TestEndStateModernLockerJoins(t *testing.T) {
	locktest.Run(t, locktest.All(t), func(t *testing.T, tg locktest.Target) {
		ctx := context.Background()
		name := locktest.Key(t, "order")
		for _, kc := range []legacy.KeyCodec{legacy.KeyRaw, legacy.KeyJavaString} {
			t.Run(kc.String(), func(t *testing.T) {
				m := New(tg.Client, WithPhase(PhaseModern), WithLegacy(legacy.WithKeyCodec(kc)))
				_, key, err := m.Keys(name)
				require.NoError(t, err)
				p := modern.New(tg.Client)

				// migrate first: the plain locker is refused, and the bytes
				// stored are a modern lock's.
				ml, err := m.TryLock(ctx, name, 5*time.Second)
				require.NoError(t, err)
				stored, ok := locktest.Get(t, tg.Client, key)
				require.True(t, ok, "migrate at modern writes the derived key")
				assert.Equal(t, ml.Token(), stored)
				assert.Len(t, stored, 22, "modern.NewToken: 16 random bytes, base64url")
				assert.InDelta(t, 5000, locktest.PTTL(t, tg.Client, key), 200)
				_, err = p.TryLock(ctx, key, time.Second)
				require.ErrorIs(t, err, lockbridge.ErrNotObtained)
				require.NoError(t, ml.Unlock(ctx))
				_, ok = locktest.Get(t, tg.Client, key)
				assert.False(t, ok, "released")

				// plain first: migrate is refused until the plain lock goes.
				pl, err := p.TryLock(ctx, key, 5*time.Second)
				require.NoError(t, err)
				_, err = m.TryLock(ctx, name, time.Second)
				require.ErrorIs(t, err, lockbridge.ErrNotObtained)
				require.NoError(t, pl.Unlock(ctx))
				ml, err = m.TryLock(ctx, name, time.Second)
				require.NoError(t, err)
				require.NoError(t, ml.Unlock(ctx))
			})
		}

		// Contention: two of each, a guard that is not the lock.
		m := New(tg.Client, WithPhase(PhaseModern))
		_, key, err := m.Keys(name)
		require.NoError(t, err)
		p := modern.New(tg.Client)
		var inside, overlaps, taken atomic.Int64
		var wg sync.WaitGroup
		work := func(try func() (lockbridge.Lock, error)) {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				lk, err := try()
				if err != nil {
					continue
				}
				if inside.Add(1) > 1 {
					overlaps.Add(1)
				}
				taken.Add(1)
				time.Sleep(100 * time.Microsecond)
				inside.Add(-1)
				assert.NoError(t, lk.Unlock(ctx))
			}
		}
		for i := 0; i < 2; i++ {
			wg.Add(2)
			go work(func() (lockbridge.Lock, error) { return m.TryLock(ctx, name, 5*time.Second) })
			go work(func() (lockbridge.Lock, error) { return p.TryLock(ctx, key, 5*time.Second) })
		}
		wg.Wait()
		assert.Zero(t, overlaps.Load(), "two holders at once")
		assert.Positive(t, taken.Load())
	})
}
