package redisson

import (
	_ "embed"

	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/internal/protocol/luafrag"
)

// The scripts are lockbridge's own Lua, written from the wire facts of
// Redisson's locks (Redisson 3.24 and later, 4.x): the keys, hash fields,
// channels, messages, leases and replies, on the same data. Java runs
// Redisson's scripts and Go runs these; a Java and a Go holder meet only in
// what the scripts read and write, which is the same (docs/redisson.md
// lists it; TestRedissonSameState in the interop tests runs one sequence
// with Java Redisson and with this package and compares what is stored and
// published). Each file's header gives its KEYS, ARGV and replies; every
// script checks its arguments first (args.lua) and writes nothing when one
// is bad.
//
//   - acquire.lua, fenced_acquire.lua (with the token counter), renew.lua,
//     release.lua (with the unlock latch), force_unlock.lua: the lock;
//   - fair_try.lua, fair_acquire.lua, fair_dequeue.lua, fair_release.lua,
//     fair_force_unlock.lua: the fair lock, whose waiters' line is kept by
//     the fragment redisson_queue.lua.
//
// Where this package departs from Redisson, on purpose: an unlock request
// sent again whose latch is gone answers "unknown" (-1) instead of running
// the release again, and the fenced acquire floors the token at the
// server's clock in µs (modern_fence.lua).
var (
	//go:embed scripts/acquire.lua
	acquireSrc    string
	acquireScript = luafrag.Script("redisson/scripts/acquire.lua", acquireSrc, "args.lua")
	//go:embed scripts/release.lua
	releaseSrc    string
	releaseScript = luafrag.Script("redisson/scripts/release.lua", releaseSrc, "args.lua")
	//go:embed scripts/renew.lua
	renewSrc    string
	renewScript = luafrag.Script("redisson/scripts/renew.lua", renewSrc, "args.lua")
	//go:embed scripts/force_unlock.lua
	forceUnlockSrc    string
	forceUnlockScript = luafrag.Script("redisson/scripts/force_unlock.lua", forceUnlockSrc, "args.lua")

	//go:embed scripts/fenced_acquire.lua
	fencedAcquireSrc    string
	fencedAcquireScript = luafrag.Script("redisson/scripts/fenced_acquire.lua", fencedAcquireSrc, "args.lua",
		"modern_fence.lua")

	//go:embed scripts/fair_try.lua
	fairTrySrc    string
	fairTryScript = luafrag.Script("redisson/scripts/fair_try.lua", fairTrySrc, "args.lua", "redisson_queue.lua")
	//go:embed scripts/fair_acquire.lua
	fairAcquireSrc    string
	fairAcquireScript = luafrag.Script("redisson/scripts/fair_acquire.lua", fairAcquireSrc, "args.lua",
		"redisson_queue.lua")
	//go:embed scripts/fair_dequeue.lua
	fairDequeueSrc    string
	fairDequeueScript = luafrag.Script("redisson/scripts/fair_dequeue.lua", fairDequeueSrc, "args.lua")
	//go:embed scripts/fair_release.lua
	fairReleaseSrc    string
	fairReleaseScript = luafrag.Script("redisson/scripts/fair_release.lua", fairReleaseSrc, "args.lua",
		"redisson_queue.lua")
	//go:embed scripts/fair_force_unlock.lua
	fairForceUnlockSrc    string
	fairForceUnlockScript = luafrag.Script("redisson/scripts/fair_force_unlock.lua", fairForceUnlockSrc, "args.lua",
		"redisson_queue.lua")
)

// allScripts returns the scripts this package runs (its tests check each
// against the server and the golden vectors).
func allScripts() []*driver.Script {
	return []*driver.Script{acquireScript, releaseScript, renewScript, forceUnlockScript, fencedAcquireScript,
		fairTryScript, fairAcquireScript, fairDequeueScript, fairReleaseScript, fairForceUnlockScript}
}
