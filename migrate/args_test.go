package migrate

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge/internal/protocol/migrateproto"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
)

// The dual scripts refuse an argument in any but its exact form with an
// error reply, before they touch a key: nothing is changed. The case the
// old '== "1"' test let through: a mode flag sent as '"1"' (JSON), 'true'
// or '1 ' made a dual-write acquire skip the legacy key and report success
// — the dual-read acquire, beside Java lockers. With good arguments the
// same call acts, which shows the refusal is the check's.
func TestFaultDualScriptArgumentsStrict(t *testing.T) {
	t.Parallel()
	tg := locktest.Single(t)[0]
	ctx := context.Background()
	now := time.Now().UnixMilli()
	ms := func(v int64) string { return strconv.FormatInt(v, 10) }
	set := func(k, v string, px int64) {
		args := []any{"SET", k, v}
		if px > 0 {
			args = append(args, "PX", px)
		}
		_, err := tg.Client.Do(ctx, args...)
		require.NoError(t, err)
	}
	w := now + 10_001

	t.Run("acquire", func(t *testing.T) {
		L := locktest.Key(t, "k")
		M, err := DeriveModernKey(L)
		require.NoError(t, err)
		F, _ := fenceName(M)
		good := []string{"1", ms(w), "decimal", ms(now), "token", "10000", "0", "1"}
		r := locktest.StrictArgs(t, tg.Client, migrateproto.AcquireScript, []string{L, M, F}, good, map[int][]string{
			0: locktest.BadFlags, 1: locktest.BadDecimalValues, 2: locktest.BadCodecs, 3: locktest.BadInts,
			4: {""}, 5: append([]string{"0", "-1"}, locktest.BadInts...), 6: {"1", "", "00", `"0"`}, 7: locktest.BadFlags,
		}, []string{L, M, F})
		require.Len(t, r, 2)
		assert.Equal(t, int64(1), r.([]any)[0], "the good arguments acquire")
		assert.Positive(t, r.([]any)[1], "fenced")
		stored, _ := locktest.Get(t, tg.Client, L)
		assert.Equal(t, ms(w), stored, "dual-write wrote the legacy key")
	})

	t.Run("release", func(t *testing.T) {
		L := locktest.Key(t, "k")
		M, err := DeriveModernKey(L)
		require.NoError(t, err)
		set(L, ms(w), 0)
		set(M, "token", 100_000)
		good := []string{"1", "token", "PUBLISH", "decimal", "ms", ms(w), "10000", ms(now), "2000"}
		bad := locktest.BadOwnerArgs(3)
		bad[0], bad[1], bad[2] = locktest.BadFlags, []string{""}, locktest.BadPublish
		r := locktest.StrictArgs(t, tg.Client, migrateproto.ReleaseScript, []string{L, M, M + ":released"}, good, bad,
			[]string{L, M})
		assert.Equal(t, []any{int64(1), int64(1)}, r, "the good arguments release both keys")
		_, ok := locktest.Get(t, tg.Client, L)
		assert.False(t, ok)
	})

	t.Run("refresh", func(t *testing.T) {
		L := locktest.Key(t, "k")
		M, err := DeriveModernKey(L)
		require.NoError(t, err)
		set(L, ms(w), 0)
		set(M, "token", 100_000)
		good := []string{"1", "token", "500000", ms(w + 5000), "decimal", "ms", ms(w), "10000", ms(now), "2000"}
		bad := locktest.BadOwnerArgs(4)
		bad[0], bad[1], bad[2], bad[3] = locktest.BadFlags, []string{""}, append([]string{"0", "-1"}, locktest.BadInts...),
			locktest.BadDecimalValues
		r := locktest.StrictArgs(t, tg.Client, migrateproto.RefreshScript, []string{L, M}, good, bad, []string{L, M})
		assert.Equal(t, []any{int64(1), int64(1)}, r, "the good arguments refresh both keys")
		stored, _ := locktest.Get(t, tg.Client, L)
		assert.Equal(t, ms(w+5000), stored)
		assert.Greater(t, locktest.PTTL(t, tg.Client, M), int64(100_000))
	})
}
