package redisson

import (
	_ "embed"
	"strings"

	"github.com/lockbridge/lockbridge/driver"
)

// The scripts are Redisson's own, byte for byte: each file holds the text
// Redisson (3.24 and later, 4.x) sends, so a script cached by one side
// (Redisson sends EVALSHA by default since 3.46) is the other's too. The
// files end with a newline for editors; the scripts sent do not.
//
//   - acquire.lua (RedissonLock.tryLockInnerAsync): KEYS[1] the lock name;
//     ARGV[1] the lease in ms, ARGV[2] the field "<client id>:<owner id>".
//     When the key is absent or has the field: HINCRBY field 1, PEXPIRE
//     lease, reply nil (acquired). Otherwise reply the key's PTTL.
//   - release.lua (RedissonLock.unlockInnerAsync): KEYS[1] the lock name,
//     KEYS[2] its channel, KEYS[3] the unlock latch
//     "redisson_unlock_latch:{name}:<request id>"; ARGV[1] the message "0",
//     ARGV[2] the lease in ms, ARGV[3] the field, ARGV[4] PUBLISH or
//     SPUBLISH, ARGV[5] the latch's life in ms. A latch that exists is the
//     reply of an earlier run of the same request (0 or 1). Without our
//     field: nil. Otherwise HINCRBY field −1: above 0, PEXPIRE lease and
//     reply 0 (still held by the owner); at 0, DEL the key, publish "0" on
//     the channel and reply 1. Either reply is also written to the latch.
//   - renew.lua (Redisson's watchdog, renewal.LockTask, batched over keys):
//     KEYS the lock names; ARGV[1] the lease in ms, ARGV[i+1] the field for
//     KEYS[i]. Per key: when the field exists, PEXPIRE lease and 1, else 0.
//   - force_unlock.lua (RedissonLock.forceUnlockAsync): KEYS[1] the lock
//     name, KEYS[2] its channel; ARGV[1] "0", ARGV[2] the publish command.
//     DEL the key; when it existed, publish and reply 1, else 0.
//   - fenced_acquire.lua (RedissonFencedLock.tryLockInnerAsync, behind
//     lockAndGetToken and tryLockAndGetToken): acquire.lua with KEYS[2] the
//     token counter "redisson_lock_token:{name}", INCRed by every acquire,
//     re-entries too; replies {-1, token} when acquired, else {PTTL, -1}.
//
// The fair lock's (RedissonFairLock) add the waiters' queue, KEYS[2]
// "redisson_lock_queue:{name}" (a LIST of fields), and their timeouts,
// KEYS[3] "redisson_lock_timeout:{name}" (a ZSET: field → the time, in ms
// of the waiters' clocks, after which the waiter counts as gone). Each first
// drops the queue's head while its timeout is at or below the caller's now.
//
//   - fair_try.lua (tryLock() without a wait): ARGV[1] lease, ARGV[2] field,
//     ARGV[3] now (ms), ARGV[4] wait (ms). Acquires when the key is absent and
//     the queue empty or headed by us (leaving the queue, and taking wait off
//     every other timeout), or re-enters; else replies 1. Never queues.
//   - fair_acquire.lua (tryLock(wait) and lock()): ARGV[1] lease, ARGV[2]
//     field, ARGV[3] wait, ARGV[4] now. As fair_try, but when it cannot
//     acquire it queues the field (once) with the timeout "the previous
//     waiter's timeout, or now + the lock's PTTL, plus wait", and replies the
//     lock's PTTL (or the time left before the previous waiter's timeout).
//   - fair_dequeue.lua (acquireFailed): KEYS[1] the queue, KEYS[2] the
//     timeouts; ARGV[1] field, ARGV[2] wait. Leaves the queue, taking wait off
//     the timeouts of those behind.
//   - fair_release.lua: release.lua's KEYS plus the queue and timeouts
//     (KEYS: name, queue, timeouts, channel, latch; ARGV: "0", lease, field,
//     now, publish command, latch life). The last hold's unlock (or an unlock
//     of an absent key, which replies 1) publishes "0" on the queue head's
//     own channel, "<channel>:<field>", not on the lock's channel.
//   - fair_force_unlock.lua: KEYS name, queue, timeouts, channel; ARGV "0",
//     now, publish command. DEL the key and wake the queue head.
var (
	//go:embed scripts/acquire.lua
	acquireSrc string
	//go:embed scripts/release.lua
	releaseSrc string
	//go:embed scripts/renew.lua
	renewSrc string
	//go:embed scripts/force_unlock.lua
	forceUnlockSrc string
	//go:embed scripts/fenced_acquire.lua
	fencedAcquireSrc string
	//go:embed scripts/fair_try.lua
	fairTrySrc string
	//go:embed scripts/fair_acquire.lua
	fairAcquireSrc string
	//go:embed scripts/fair_dequeue.lua
	fairDequeueSrc string
	//go:embed scripts/fair_release.lua
	fairReleaseSrc string
	//go:embed scripts/fair_force_unlock.lua
	fairForceUnlockSrc string

	acquireScript     = script("redisson/scripts/acquire.lua", acquireSrc)
	releaseScript     = script("redisson/scripts/release.lua", releaseSrc)
	renewScript       = script("redisson/scripts/renew.lua", renewSrc)
	forceUnlockScript = script("redisson/scripts/force_unlock.lua", forceUnlockSrc)

	fencedAcquireScript = script("redisson/scripts/fenced_acquire.lua", fencedAcquireSrc)

	fairTryScript         = script("redisson/scripts/fair_try.lua", fairTrySrc)
	fairAcquireScript     = script("redisson/scripts/fair_acquire.lua", fairAcquireSrc)
	fairDequeueScript     = script("redisson/scripts/fair_dequeue.lua", fairDequeueSrc)
	fairReleaseScript     = script("redisson/scripts/fair_release.lua", fairReleaseSrc)
	fairForceUnlockScript = script("redisson/scripts/fair_force_unlock.lua", fairForceUnlockSrc)
)

func script(name, src string) *driver.Script {
	return driver.NewScript(name, strings.TrimSuffix(src, "\n"))
}

// Scripts returns the scripts this package runs, for inspection (the
// golden vectors pin their SHA1s) and for ACL planning.
func Scripts() []*driver.Script {
	return []*driver.Script{acquireScript, releaseScript, renewScript, forceUnlockScript, fencedAcquireScript,
		fairTryScript, fairAcquireScript, fairDequeueScript, fairReleaseScript, fairForceUnlockScript}
}
