// Package redlock is the quorum lock over independent Redis masters — the
// Redlock algorithm, as in Redisson's RedissonRedLock and redsync — built on
// the modern lock: the same token and the same scripts, sent to each of N
// masters. *Locker implements lockbridge.Locker, *Lock implements
// lockbridge.Lock.
//
//	locker := redlock.New([]driver.Client{a, b, c, d, e}, redlock.WithAutoRefresh())
//	lock, err := locker.Lock(ctx, "invoice:42", 10*time.Second)
//	if err != nil {
//		return err // a *redlock.QuorumError says what each node answered
//	}
//	defer lock.Unlock(ctx)
//	select {
//	case <-lock.Done(): // lost: stop; lock.Err() wraps lockbridge.ErrLost
//	case <-work():
//	}
//
// # The algorithm
//
// An acquire is one round: the modern acquire (SET key token NX PX ttl,
// one token for all nodes) goes to every node in parallel, each node
// bounded by a node timeout (WithNodeTimeout; by default ttl/10, at most
// 50 ms) well below the ttl, so a node that is down or hung costs at most
// that. The lock is obtained when a majority — N/2+1 — acquired and the
// validity is still positive:
//
//	validity = ttl − (time the round took) − drift,  drift = ttl×0.01 + 2 ms
//
// (WithDrift). Lock.ExpiresAt is the end of that validity.
// Otherwise the round is undone: the release goes, in parallel, on a short
// detached context, to every node that acquired and every node that did not
// answer (its SET may have landed), and the error is a *QuorumError
// wrapping lockbridge.ErrNotObtained — or lockbridge.ErrUnknownOutcome when
// the nodes whose SET got no reply and whose release found no token of ours
// (the SET may still be on its way, and run after the release) could make
// a majority with those that acquired. Lock makes rounds until one succeeds,
// sleeping between them for a backoff with jitter (contenders that split the
// votes must not retry in step), never longer than it takes for enough
// holders' leases to run out to free a majority.
//
// Refresh and Unlock are rounds too, with the modern refresh and release
// scripts: a refresh that keeps fewer than a majority reports the lock lost
// when the nodes' answers prove it is no longer ours, and auto-refresh
// (WithAutoRefresh) closes Done when it cannot keep a majority, as modern's
// does on one node. Done closes at the end of the validity minus a twelfth
// of the lease by a timer nothing in flight can delay, with or without
// auto-refresh (Err then says the lease ran out); a refresh round to a
// shorter ttl shortens the validity when it is sent, whatever the nodes
// answer. An Unlock asked again after a node's reply was lost, finding
// another holder there, cannot tell that from its release having run: the
// node counts as failed with lockbridge.ErrUnknownOutcome, never as
// "released" or "not held".
//
// Every round runs one goroutine per node and returns only when all have
// returned; the auto-refresh goroutine ends with the lock. A node that hangs
// is cut off by the node timeout, but with the go-redis adapter the command
// itself then finishes in the background, until go-redis's ReadTimeout —
// unless the client is built with ContextTimeoutEnabled: true, which the
// adapter then leaves deadlines to (recommended for Redlock).
//
// # Nodes
//
// The clients must reach independent masters: not replicas of one another,
// not nodes of one cluster, and not the same server twice, or a failure
// takes out more votes than it should. At least 3 (else ErrInvalid); 5
// tolerate two failures. An even number is allowed but wasteful: 4 nodes
// need 3 votes and survive one failure, like 3 nodes. A driver.Client does
// not know its address: name the nodes with WithNodeNames for errors, which
// otherwise say "node 2".
//
// # Errors
//
// A failed round returns a *QuorumError listing each node's answer (OK,
// Taken, Expired or Failed, with the node's error). It wraps
// lockbridge.ErrNotObtained on acquire — whether the other nodes were held
// by others or down, but not when a node answered a Redis error reply, a
// misconfiguration Lock does not retry — and, on refresh and unlock, lockbridge.ErrNotHeld
// when the lock is certainly not ours any more. It also wraps the failed
// nodes' errors, a node that did not answer in time as ErrNodeTimeout, so
// errors.Is(err, context.DeadlineExceeded) is true only when the caller's
// context ran out. Bad arguments and options wrap lockbridge.ErrInvalid,
// from every call, never a panic. Messages start with "redlock: ".
//
// # What it assumes, and what it does not give
//
// Redlock's safety rests on timing: clocks that advance at about the same
// rate on every node and client (drift below the allowance), and a holder
// that stops using the lock before ExpiresAt. A process pause (GC, swapping,
// a stopped VM) or a long network delay after the check breaks that, and so
// does a node that restarts without persistence and forgets a key while the
// lease runs (run nodes with appendfsync always, or keep a restarted node
// out for a ttl). The answer to pauses is fencing — the storage rejecting
// writes from a stale holder — and a fencing token needs one authority that
// orders the holders; N independent counters do not make one, so this
// package offers no fencing. Where a lock guards correctness rather than
// efficiency, use modern with WithFencing, or a consensus system.
// docs/redlock.md has the argument in full, and docs/protocol.md the wire.
package redlock
