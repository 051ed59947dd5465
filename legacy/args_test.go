package legacy_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/legacy"
)

// Every script of ModeAtomic refuses an argument in any but its exact form
// (a JSON-quoted number, a sign, spaces, another codec or unit name, a
// value that does not decode, a missing or extra argument) with an error
// reply, before it touches the key: nothing is changed. With good
// arguments the same call acts, which shows the refusal is the check's.
func TestFaultScriptArgumentsStrict(t *testing.T) {
	t.Parallel()
	tg := locktest.Single(t)[0]
	now := time.Now().UnixMilli()
	ms := func(v int64) string { return strconv.FormatInt(v, 10) }
	merge := func(a, b map[int][]string) map[int][]string {
		for k, v := range b {
			a[k] = v
		}
		return a
	}

	t.Run("acquire", func(t *testing.T) {
		key := locktest.Key(t, "k")
		expired := ms(now - 1000)
		locktest.Set(t, tg.Client, key, expired)
		good := []string{ms(now + 10_001), "decimal", ms(now), "0"}
		r := locktest.StrictArgs(t, tg.Client, legacy.AcquireScript, []string{key}, good, map[int][]string{
			0: locktest.BadDecimalValues, 1: locktest.BadCodecs, 2: locktest.BadInts,
			3: append([]string{"-1"}, locktest.BadInts...),
		}, []string{key})
		assert.Equal(t, []any{int64(2), expired}, r, "the good arguments take the expired value over")
	})

	w := now + 10_001
	t.Run("release", func(t *testing.T) {
		key := locktest.Key(t, "k")
		locktest.Set(t, tg.Client, key, ms(w))
		good := []string{"decimal", "ms", ms(w), "10000", ms(now), "2000"}
		r := locktest.StrictArgs(t, tg.Client, legacy.ReleaseScript, []string{key}, good, locktest.BadOwnerArgs(0),
			[]string{key})
		assert.Equal(t, int64(1), r, "the good arguments release")
		_, ok := locktest.Get(t, tg.Client, key)
		assert.False(t, ok)
	})

	t.Run("refresh", func(t *testing.T) {
		key := locktest.Key(t, "k")
		locktest.Set(t, tg.Client, key, ms(w))
		good := []string{"decimal", "ms", ms(w), "10000", ms(now), "2000", ms(w + 5000), "60000"}
		r := locktest.StrictArgs(t, tg.Client, legacy.RefreshScript, []string{key}, good, merge(locktest.BadOwnerArgs(0),
			map[int][]string{
				6: locktest.BadDecimalValues, 7: append([]string{"-1"}, locktest.BadInts...),
			}), []string{key})
		assert.Equal(t, int64(1), r, "the good arguments refresh")
		stored, _ := locktest.Get(t, tg.Client, key)
		assert.Equal(t, ms(w+5000), stored)
	})
}
