// Package redisson takes the same locks as Java's Redisson (RLock, 3.24 and
// later, 4.x), so Go services and Redisson services can share them: the
// same hash, fields and counts, the same leases, the same unlock messages on
// the same channels, the same watchdog renewal. Its scripts are its own
// (lockbridge's Lua, with its argument checks); what they read and write is
// Redisson's, which the interop tests check by running one sequence with
// Java Redisson and with this package and comparing the stored state and
// the messages.
// *Locker and *Owner implement lockbridge.Locker, *Lock implements
// lockbridge.Lock (assert lk.(*redisson.Lock) for Owner and Fence).
//
//	locker := redisson.New(goredis.New(rdb), redisson.WithWatchdog())
//	owner := locker.NewOwner() // what a Java thread is to Redisson
//	lock, err := owner.Lock(ctx, "orders", redisson.DefaultWatchdogTimeout)
//	if err != nil {
//		return err // wraps lockbridge.ErrNotObtained and ctx.Err() if ctx ended
//	}
//	defer lock.Unlock(ctx)
//
// # On the wire
//
// A lock named K is the HASH K. Each holder has one field, "<client
// id>:<owner id>" — in Java the RedissonClient's UUID and the thread id, in
// Go the Locker's client id (a random UUID by default) and the Owner's id —
// whose value counts its reentrant holds. Four scripts (see scripts.go; the
// fenced lock has one more, the fair lock five) do everything, each with the
// effect of Redisson's script for the same step:
//
//   - acquire: when K is absent or has our field, HINCRBY field 1 and
//     PEXPIRE ttl (for the whole lock: a Go owner never sends less than its
//     other holds of K have left); otherwise reply K's PTTL;
//   - release: HINCRBY field −1; above 0 PEXPIRE ttl, at 0 DEL K and
//     publish "0" on "redisson_lock__channel:{K}" (a K holding '{' is not
//     wrapped again: "redisson_lock__channel:K"); the reply (0 or 1; nil
//     when the field is absent, not kept) is also kept for a while in the
//     unlock latch "redisson_unlock_latch:{K}:<request id>", and a second
//     run of the same request returns it instead of acting again — or,
//     when the latch is gone, answers "unknown" and does nothing;
//   - renew (the watchdog): PEXPIRE ttl if our field is in K;
//   - force unlock: DEL K and publish "0".
//
// Unlocks publish with SPUBLISH in a Redis Cluster and PUBLISH otherwise,
// as Redisson's default (sharded subscription mode AUTO) subscribes
// (WithPlainPublish makes it PUBLISH everywhere). In a cluster, the key, its channel and its
// latches must hash to one slot: keys with odd braces ("{}x") are refused
// with lockbridge.ErrInvalid there, as Redisson cannot run them either.
//
// # Fair locks
//
// With WithFair a Locker takes Redisson's fair lock (RedissonFairLock)
// with its scripts: Lock calls queue their owner's field in
// "redisson_lock_queue:{K}" with a timeout in "redisson_lock_timeout:{K}",
// an unlock wakes the queue's head on its own channel
// "redisson_lock__channel:{K}:<field>", and Go and Java waiters are served in
// one arrival order. TryLock never queues. A waiter that gives up leaves the
// queue; one that vanished is dropped once its timeout has passed by the
// clock of the client running the next fair script. Those timeouts are the
// clients' clocks set against one another, as in Redisson: they order the
// queue and never admit anyone — an acquire succeeds only when the hash is
// absent (or ours).
//
// # Fenced locks
//
// With WithFencing a Locker takes Redisson's fenced lock
// (RedissonFencedLock): every acquire, re-entries too, advances
// "redisson_lock_token:{K}" in the acquire script, and Lock.Fence returns the
// value it got, above every token handed out before on K by Java or Go.
// Java INCRs the counter; Go writes max(counter + 1, the server's time in
// µs), so Go's tokens keep increasing across a restart without persistence
// or a failover to a lagging replica, where the counter goes back (Java's
// tokens can then repeat).
//
// # Owners and reentrancy
//
// Goroutines have no ids, so reentrancy belongs to an explicit *Owner
// (Locker.NewOwner): an owner that takes a lock it holds gets another hold
// at once, and the lock is free when each hold is unlocked. The count lives
// in the hash, where Java and Go both read it (Owner.HoldCount,
// Locker.Holders); Java's reentrant holds are respected by Go, since a Go
// owner's field is never a Java thread's. Locker.TryLock and Locker.Lock
// take a lock for a new owner each time: not reentrant.
//
// # Leases and the watchdog
//
// Every lock takes an explicit ttl, the lease. Without WithWatchdog it is
// Redisson's lock(leaseTime): the lock lives for ttl unless refreshed by
// hand (Lock.Refresh). With WithWatchdog each hold renews the lease every
// ttl/3 while its field exists, as Redisson's watchdog does every
// lockWatchdogTimeout/3; a ttl of DefaultWatchdogTimeout (30 s) is exactly
// Java's lock(). A renewal that finds the field gone, or no renewal
// succeeding before the last twelfth of the lease, makes the hold lost:
// Done closes and Err wraps lockbridge.ErrLost. That give-up point is a
// timer nothing in flight can delay (a Refresh whose reply never comes
// cannot hold it; one to a shorter ttl shortens the lease when sent). A
// hold without watchdog closes Done at the same point, the last twelfth of
// its lease, and Err then says the lease ran out; a hold whose lease ended
// is not renewed any more.
//
// Redisson may, with replicas, WAIT for them after an acquire and undo the
// acquire when they do not confirm (checkLockSyncedSlaves). This package
// does not: an acquire is held once the primary has it.
//
// # Waiting
//
// Lock waits as Redisson does: it subscribes to the lock's channel after a
// failed attempt, attempts again once subscribed, and then sleeps until an
// unlock message or the holder's PTTL (bounded by WithBackoff). A Java
// unlock wakes a Go waiter at once, and a Go unlock a Java waiter. All
// waiters of a Locker share one subscription, opened when the first waits
// and closed when the last returns.
//
// # Unlock and lost replies
//
// An Unlock sends the unlock once, with a fresh request id. When its reply
// is lost the error wraps lockbridge.ErrUnknownOutcome; calling Unlock
// again resends nothing by itself but lets the caller ask again with the
// same request id, marked as asked again, and the latch returns the first
// run's result. When the latch is gone (expired, or evicted under memory
// pressure) the script does nothing and the answer stays unknown: a hold is
// never released twice. The second call is refused after half the latch's
// life (20 s), the margin for the first command's
// way to the server.
//
// A write of an Owner whose reply was lost may still land later, on a
// hold the owner takes of the lock afterwards (they share its field):
// after an acquire or renewal of unknown outcome, the owner's later holds
// of that lock count no grant for more than its lease; after an unlock of
// unknown outcome, the owner refuses to take that lock again (an error
// wrapping lockbridge.ErrUnknownOutcome, nothing sent) until asking that
// Unlock again gets the latch's answer.
//
// # Errors
//
// TryLock on a lock held by another owner returns a *lockbridge.NotObtainedError
// (wrapping lockbridge.ErrNotObtained) with the holder's remaining lease;
// on a fair lock its Detail names the queued waiter ahead, if any, and until when it
// keeps its place.
// Unlock and Refresh on a hold whose field is gone return a
// *lockbridge.NotHeldError. Bad arguments and options wrap
// lockbridge.ErrInvalid; Redis errors (WRONGTYPE on a key that is not a
// hash) come back wrapped as they are. Messages start with "redisson: ".
//
// docs/redisson.md says what is compatible with Redisson and what is not,
// and how to map Java threads to Go owners.
package redisson
