package control

import (
	"context"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/driver/keyslot"
	"github.com/lockbridge/lockbridge/internal/protocol/legacyproto"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/legacy"
	"github.com/lockbridge/lockbridge/migrate"
	"github.com/lockbridge/lockbridge/modern"
)

// Names of 125 and 381 bytes under KeyJavaString get the JDK length byte
// 0x7d, '}': the untagged legacy key holds a stray '}', and the derived
// modern key "{" + L + "}:modern" hashed elsewhere. Such names used to be
// refused in every phase; now they lock in every phase, with fencing, on a
// single server and on a 3-master cluster (where a cross-slot script fails).
func TestFaultJavaStringNameWithBraceLengthByte(t *testing.T) {
	locktest.Run(t, locktest.All(t), func(t *testing.T, tg locktest.Target) {
		ctx := context.Background()
		for _, n := range []int{125, 381} {
			name := locktest.Key(t, "") + strings.Repeat("n", n-len(locktest.Key(t, "")))
			require.Len(t, name, n)
			p, err := legacyproto.NewProfile(legacy.WithKeyCodec(legacy.KeyJavaString))
			require.NoError(t, err)
			lkey, err := p.EncodeKey(name)
			require.NoError(t, err)
			require.Equal(t, byte('}'), lkey[6], "the length byte is '}'")
			mkey, err := migrate.DeriveModernKey(lkey)
			require.NoError(t, err)
			require.Equal(t, keyslot.Of(lkey), keyslot.Of(mkey))
			for _, ph := range []migrate.Phase{migrate.PhaseLegacy, migrate.PhaseDualWrite, migrate.PhaseDualRead,
				migrate.PhaseModern} {
				l := migrate.New(tg.Client, migrate.WithPhase(ph), migrate.WithLegacy(legacy.WithKeyCodec(legacy.KeyJavaString)),
					migrate.WithModern(modern.WithFencing()))
				lk, err := l.TryLock(ctx, name, time.Minute)
				require.NoError(t, err, "%d bytes, %v", n, ph)
				_, lok := locktest.Get(t, tg.Client, lkey)
				_, mok := locktest.Get(t, tg.Client, mkey)
				assert.Equal(t, ph == migrate.PhaseLegacy || ph == migrate.PhaseDualWrite, lok, "%d bytes, %v: legacy key", n, ph)
				assert.Equal(t, ph >= migrate.PhaseDualWrite, mok, "%d bytes, %v: modern key", n, ph)
				_, err = l.TryLock(ctx, name, time.Minute)
				assert.ErrorIs(t, err, lockbridge.ErrNotObtained, "%d bytes, %v", n, ph)
				require.NoError(t, lk.Unlock(ctx), "%d bytes, %v", n, ph)
				l.Close(ctx)
			}
		}
	})
}

// A live legacy value of math.MaxInt64 with no modern key is a legacy-only
// holder: migrate records a sighting and reports it held for ever. The Lua
// number 2^63 it decodes to used to reach Go as -9223372036854775808: "held
// until -9223372036854775808", taken for expired, and no sighting.
func TestFaultLegacyMaxInt64Sighting(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := context.Background()
	for _, p := range []migrate.Phase{migrate.PhaseDualWrite, migrate.PhaseDualRead} {
		t.Run(p.String(), func(t *testing.T) {
			ns := t.Name()
			name := locktest.Key(t, "k")
			_, err := tg.Client.Do(ctx, "SET", name, strconv.FormatInt(math.MaxInt64, 10))
			require.NoError(t, err)
			l := migrate.New(tg.Client, migrate.WithPhase(p), migrate.WithNamespace(ns))
			defer l.Close(ctx)
			_, err = l.TryLock(ctx, name, time.Second)
			require.ErrorIs(t, err, lockbridge.ErrNotObtained)
			assert.NotContains(t, err.Error(), "-9223372036854775808")
			ctl, err := New(tg.Client, ns)
			require.NoError(t, err)
			st, err := ctl.Status(ctx)
			require.NoError(t, err)
			assert.Equal(t, name, st.Sighting.Key, "a legacy-only holder is sighted")
			assert.Equal(t, int64(1), st.Sighting.Count)
		})
	}
}
