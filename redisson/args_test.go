package redisson_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/lockbridge/lockbridge/internal/testing/locktest"
)

// Every script refuses a bad argument before it touches a key
// (internal/protocol/luafrag/args.lua): a lease, time or wait that is not a
// decimal integer in range, an empty field, a publish command other than
// PUBLISH or SPUBLISH, an "asked again" flag other than '0' or '1', one
// argument too few or too many. The keys are a held lock (another field,
// two holds, a lease), a waiter in line and its timeout.
func TestScriptsRefuseBadArguments(t *testing.T) {
	tg := locktest.Single(t)[0]
	c := tg.Client
	lease := append([]string{"0", "-1"}, locktest.BadInts...)
	waits := append([]string{"-1"}, locktest.BadInts...)
	publish := append([]string{""}, locktest.BadPublish...)
	field := []string{""}
	now := strconv.FormatInt(time.Now().UnixMilli(), 10)
	type run struct {
		script string
		keys   func(L, Q, Z, C, T, latch string) []string
		good   []string
		bad    map[int][]string
	}
	runs := []run{
		{"acquire.lua", func(L, Q, Z, C, T, latch string) []string { return []string{L} },
			[]string{"60000", "f:1"}, map[int][]string{0: lease, 1: field}},
		{"fenced_acquire.lua", func(L, Q, Z, C, T, latch string) []string { return []string{L, T} },
			[]string{"60000", "f:1"}, map[int][]string{0: lease, 1: field}},
		{"renew.lua", func(L, Q, Z, C, T, latch string) []string { return []string{L} },
			[]string{"60000", "f:1"}, map[int][]string{0: lease, 1: field}},
		{"release.lua", func(L, Q, Z, C, T, latch string) []string { return []string{L, C, latch} },
			[]string{"f:1", "60000", "PUBLISH", "20000", "0"},
			map[int][]string{0: field, 1: lease, 2: publish, 3: lease, 4: locktest.BadFlags}},
		{"force_unlock.lua", func(L, Q, Z, C, T, latch string) []string { return []string{L, C} },
			[]string{"PUBLISH"}, map[int][]string{0: publish}},
		{"fair_try.lua", func(L, Q, Z, C, T, latch string) []string { return []string{L, Q, Z} },
			[]string{"60000", "f:1", now, "300000"}, map[int][]string{0: lease, 1: field, 2: waits, 3: waits}},
		{"fair_acquire.lua", func(L, Q, Z, C, T, latch string) []string { return []string{L, Q, Z} },
			[]string{"60000", "f:1", "300000", now}, map[int][]string{0: lease, 1: field, 2: waits, 3: waits}},
		{"fair_dequeue.lua", func(L, Q, Z, C, T, latch string) []string { return []string{Q, Z} },
			[]string{"w:1", "300000"}, map[int][]string{0: field, 1: waits}},
		{"fair_release.lua", func(L, Q, Z, C, T, latch string) []string { return []string{L, Q, Z, C, latch} },
			[]string{"f:1", "60000", now, "PUBLISH", "20000", "0"},
			map[int][]string{0: field, 1: lease, 2: waits, 3: publish, 4: lease, 5: locktest.BadFlags}},
		{"fair_force_unlock.lua", func(L, Q, Z, C, T, latch string) []string { return []string{L, Q, Z, C} },
			[]string{now, "PUBLISH"}, map[int][]string{0: waits, 1: publish}},
	}
	for _, r := range runs {
		t.Run(r.script, func(t *testing.T) {
			L := locktest.Key(t, "k")
			Q, Z, C, T := "redisson_lock_queue:{"+L+"}", "redisson_lock_timeout:{"+L+"}", "redisson_lock__channel:{"+L+"}",
				"redisson_lock_token:{"+L+"}"
			latch := "redisson_unlock_latch:{" + L + "}:0123"
			locktest.Do(t, c, "HSET", L, "f:1", "2")
			locktest.Do(t, c, "PEXPIRE", L, "60000")
			locktest.Do(t, c, "RPUSH", Q, "w:1")
			locktest.Do(t, c, "ZADD", Z, "99999999999999", "w:1")
			locktest.Do(t, c, "SET", T, "5")
			_ = locktest.StrictArgs(t, c, script(t, r.script), r.keys(L, Q, Z, C, T, latch), r.good, r.bad, []string{L, Q, Z, T,
				latch})
		})
	}
}
