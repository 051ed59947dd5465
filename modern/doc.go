// Package modern is the Redis lock lockbridge wants everyone on: SET NX PX
// with a random token, owner-checked release and refresh, auto-refresh with
// a lost-lock signal, fencing tokens, and waiters woken by the release
// instead of polling. *Locker implements lockbridge.Locker, *Lock implements
// lockbridge.Lock (assert lk.(*modern.Lock) for Fence and TTL).
//
//	locker := modern.New(goredis.New(rdb), modern.WithAutoRefresh())
//	lock, err := locker.Lock(ctx, "invoice:42", 10*time.Second)
//	if err != nil {
//		return err // wraps lockbridge.ErrNotObtained and ctx.Err() if ctx ended
//	}
//	defer lock.Unlock(ctx)
//	select {
//	case <-lock.Done(): // lost: stop; lock.Err() wraps lockbridge.ErrLost
//	case <-work():
//	}
//
// # On the wire
//
// A lock on key K is the string key K holding the holder's token (by default
// 16 random bytes, base64url) with a PX lease. Two more names live
// in K's hash slot, so each script touches one slot and runs in Redis
// Cluster: the release channel "{K}:released" and, with WithFencing, the
// fence counter "{K}:fence" (for a K that already has a hash tag, such as
// "{order}:42", the suffix is appended instead: "{order}:42:released"). Each
// operation is one round trip:
//
//   - acquire: the plain command SET K token NX PX ttl. Only when it finds
//     the key taken does a second round trip (a read-only script) learn the
//     holder's PTTL — and tell a key of another type from a holder. A
//     waiting Lock's later attempts (and its first, on a key it waited for
//     a moment ago) are one script instead, which answers with the holder's
//     PTTL in the same round trip. With fencing the acquire is always that
//     script: SET K token NX PX ttl and the next fence in {K}:fence,
//     together;
//   - release: a script: if GET K == token then DEL K and, if anyone is
//     subscribed to {K}:released (PUBSUB NUMSUB; SHARDNUMSUB in Redis
//     Cluster), publish on it (SPUBLISH in Redis Cluster, PUBLISH
//     otherwise); it tells an expired lock (no key) from a taken one
//     (another token);
//   - refresh: if GET K == token then PEXPIRE K ttl; same replies;
//   - TTL: PTTL K if GET K == token.
//
// docs/protocol.md specifies the commands, scripts, replies and channels for
// implementations in other languages. An uncontended TryLock + Unlock sends
// what a bare lock sends — SET NX PX and an EVALSHA compare-and-delete —
// and docs/performance.md compares it with exactly that, sent by each client
// alone.
//
// # Errors
//
// TryLock on a held lock returns a *lockbridge.NotObtainedError, wrapping
// lockbridge.ErrNotObtained and saying how long the holder has left.
// Unlock, Refresh and TTL on a lock that is no longer ours return a
// *lockbridge.NotHeldError wrapping lockbridge.ErrNotHeld, whose Reason is
// lockbridge.ReasonGone (the key is gone) or lockbridge.ReasonTaken (another
// holder's token is there). Bad arguments and
// options wrap lockbridge.ErrInvalid, from every call, never a panic. Redis
// and network errors come back wrapped as they are, never disguised as
// ErrNotObtained or ErrNotHeld. Messages start with "modern: ".
//
// # Waiting
//
// Lock retries while the lock is held, sleeping for its backoff
// (WithBackoff; by default exponential with jitter, 8 ms to 512 ms) but
// never longer than the holder's remaining lease, read by each failed
// attempt. With release notifications (on by default, WithNotifications) a
// waiter wakes as soon as the holder releases: after its first failed
// attempt it subscribes to the key's release channel, waits for the server's
// confirmation and tries again, so no release is missed. All waiters of a
// Locker share one subscription (one connection; in Redis Cluster, one
// sharded-pub/sub connection per slot in use), opened when the first has to
// wait. A key's channel stays subscribed for WithNotifyLinger (1 s by
// default) after its last waiter returned, and the subscription open while
// a channel does: a process that takes a contended key again and again
// waits on it again without a new connection, a subscription or a second
// attempt (the channel, confirmed before its attempt, heard any release
// since). After the linger the Locker runs no goroutine while nobody waits;
// it needs no Close (Close ends a linger at once). A release wakes one
// waiter per Locker, the head of the key's line (see Order below): only one
// can get the lock. When subscribing fails — an ACL user without
// pub/sub rights (Redis 7 gives new users none by default), sharded pub/sub
// unavailable, the server slow to confirm — Lock silently polls with its
// backoff instead, and subscribing is retried a second later. Lock never
// sleeps past the holder's lease either way. A release publishes only when
// the server counts a subscriber of the channel; since a waiter attempts
// again once its subscription is confirmed, no release is missed.
//
// Order. The Lock calls of one Locker waiting on the same key are served
// first come first served: they stand in a line (one per key, in memory),
// and only the call at its head makes attempts — the others wait for their
// turn without sending anything. When a lock of the Locker on that key is
// released (Unlock, whatever its outcome) or found lost by a Refresh, TTL
// or the auto-refresh, the head is woken at once, without waiting for the
// release notice to come back from the server; when the head gets the lock,
// or leaves (its context ended, its backoff gave up, Redis failed), the next
// call becomes the head and attempts at once. So with n callers of a
// Locker contending for a key, each waits about n − 1 holds, instead of
// racing the others at every release and, by bad luck, losing many races in
// a row. The line only orders this Locker's own callers: the lock is still
// taken on the server by the head's own attempt, where callers of other
// Lockers and processes compete with it as before (each process sends one
// contender, its head, to every release), and TryLock and a Lock whose
// backoff never retries (lockbridge.NoRetry) make their attempt without
// queueing. The backoff counts the waits spent in line as well (a backoff
// that gives up ends the call even before its turn came); with WithPollers
// the head still waits as a poller does, and a call behind it notices its
// turn at its next pause. A line holds no goroutine and ends with its last
// caller.
//
// Across processes. Every Locker's head hears each release notice. Were
// they all to attempt at once, the one whose notice came first — or whose
// caller had just called Lock — would win, often the same one again and
// again, and the others would wait many holds. Once a Locker's waiter has
// lost such a race (woken by a release, it found the lock taken again), or
// has waited through a line of notices, its heads put off each attempt
// after a wake, so that the one waiting longest attempts first: a call
// younger than 2 ms by the difference, and a call that has heard fewer
// notices than its Locker's last call needed by 0.5 ms (or twice its last
// round trip) per notice missing; they join the
// channel's waiters before their first attempt. A notice meanwhile counts
// again; a delay that passes without one ends in an attempt (those ahead
// may have gone). Nothing is skipped: each wake still leads to an attempt,
// the backoff and the holder's lease still bound the sleep, and a lone
// waiter, or two Lockers taking turns, never lose a race and attempt at
// once. The order is by each process's own clock and counts; it is a
// courtesy between lockbridge Go waiters, not a lock: TryLock, pollers and
// other libraries do not take part.
//
// A context that ends while Lock waits returns an error wrapping both
// lockbridge.ErrNotObtained and ctx.Err(). One that ends while an acquire
// is on the wire may leave the SET executing on the server after the call
// returned; Lock and TryLock then release that token at once on a detached
// context (best effort, up to 250 ms). Should the SET land after that, the
// key holds a token no Lock value knows: nobody refreshes it and it expires
// after its ttl.
//
// # Auto-refresh and lost locks
//
// With WithAutoRefresh, a lock refreshes itself every ttl/3. When a refresh
// finds the lock expired or taken, or when no refresh succeeds before the
// last ttl/12 of the lease as counted by the local monotonic clock from when
// the last successful refresh was sent (Redis down, hung or partitioned),
// the lock is lost: Done is closed and Err returns an error wrapping
// lockbridge.ErrLost (and the cause: a *lockbridge.NotHeldError, or the last Redis
// error). The give-up point is a timer that nothing in flight can delay: a
// Refresh by hand whose reply never comes, on a connection that hangs, may
// shorten the lease (a Refresh to a shorter ttl shortens it when sent, reply
// or not) but never holds Done open. Without auto-refresh, Done closes at the
// same point — the last ttl/12 of the lease, counted from the send of the
// acquire or of the last confirmed Refresh — and Err then wraps
// lockbridge.ErrLost and says the lease ran out; a lock is also known lost
// when a Refresh or TTL call finds it not held. A lock whose lease ended is
// over: Refresh refuses it (Unlock still releases it if the key is ours). Unlock stops the refresher and waits for it
// before releasing, so no refresh is ever sent after Unlock; after a clean
// Unlock, Done is closed and Err is nil. Each lock with auto-refresh runs one
// goroutine, which ends with the lock.
//
// # Fencing
//
// With WithFencing, Lock.Fence returns the fence handed out atomically with
// the acquire, by the same script: fence = max(counter + 1, the server's
// TIME in µs since the epoch), stored in {K}:fence. Pass it to storage that
// remembers the highest fence it has accepted and rejects lower ones, and a
// holder that stalled past its lease (a GC pause, a partition) cannot
// overwrite its successor's writes. Fencing never decides who holds the
// lock: the server's clock only raises fences, it never lets anyone in.
//
// Guarantees. While {K}:fence lives, fences strictly increase (the counter
// term). When it is lost — a restart of a server without persistence, a
// FLUSHDB, a failover to a replica that never got it — or goes back — a
// failover to a replica that lags — the clock term still puts the next fence
// above every earlier one, provided the server that hands it out reads a
// TIME above the last fence handed out before. Fences follow the clock of
// the server (one fence per acquire, and acquires take more than a
// microsecond), so that holds unless the new server's clock is behind the
// old one's by more than the time between the last acquire on the old
// server and the first on the new one (for a failover: its duration,
// seconds). That is the residual: a new primary whose clock is far behind
// the old one's (or a clock stepped back by more than a restart takes) can
// hand out a fence at or below one already handed out; keep the servers'
// clocks synchronised (NTP). A fence is below 2^53 (exact in a double, so
// JSON and JavaScript storage keep it), good until the year 2255.
//
// The acquire reads the counter before it writes anything: a counter of
// another type, one that is not a decimal integer, or one at 2^53 − 1 fails
// the acquire with a *FenceError (code FENCE), the lock not taken and the
// counter unchanged; Lock returns it at once rather than waiting. Counters
// written by older versions (which INCR from 1) are read as they are: the
// clock term takes over from them.
//
// The counter key has no expiry — it must outlive every lock on K for the
// fences to stay monotonic while the clocks are off — so each lock name
// leaves one small integer key behind for good. Deleting it is safe only as
// far as the clock term is (see above).
//
// What fencing buys under failover: a failover can lose the lock key, so
// two holders may both believe they hold K (this is a single-instance lock;
// see Limits); the storage, checking fences, accepts the writes of only the
// later holder once it has seen them, and rejects the earlier holder's from
// then on.
//
// # Limits
//
// This is a single-instance lock: with asynchronous replication, a master
// that fails over before replicating the SET may let a second holder in.
// Fencing protects the storage in that case; a quorum lock over independent
// masters is package redlock.
package modern
