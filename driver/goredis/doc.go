// Package goredis adapts github.com/redis/go-redis/v9 clients to driver.Client:
// *redis.Client (failover clients included), *redis.ClusterClient and
// *redis.Ring.
//
// No resends. A command that changes lock state must never be sent twice
// after it may have reached Redis: a resent release finds the next holder's
// fresh value and deletes it. go-redis resends a command whose connection
// broke or timed out (MaxRetries, 3 by default; a ClusterClient's redirect
// loop, MaxRedirects, also resends). So build the client with
//
//	redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
//	redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, MaxRetries: -1, MaxRedirects: -1})
//	redis.NewRing(&redis.RingOptions{Addrs: addrs, MaxRetries: -1})
//
// New refuses any other client: every call then fails with an error wrapping
// lockbridge.ErrInvalid that names the setting, and Check says so at
// start-up. On a cluster the adapter follows MOVED, ASK, TRYAGAIN and
// CLUSTERDOWN replies itself: Redis sends them instead of running the
// command, so nothing that ran is sent again. MOVED and ASK go straight to
// the node they name, through the cluster client's own client for it (for
// ASK, ASKING and the command in one pipeline on one connection), at most
// driver/adapter.MaxRedirects in a row; TRYAGAIN (a slot migrating with its
// keys, for a command with several keys) and CLUSTERDOWN after pauses of
// 2 ms doubling to 100 ms, for at most driver/adapter.ClusterRetryFor (2 s)
// in all, or until the context ends. A reply that never came is reported as
// an unknown outcome (lockbridge.ErrUnknownOutcome), never guessed.
//
// Commands go on the wire as the locks name them: SETNX and GETSET are sent
// literally with Do, never rewritten to SET … NX or SET … GET, because the
// Java services they must interoperate with send exactly those.
//
// Every call honours its context: go-redis itself applies a context's
// deadline only when the client was built with ContextTimeoutEnabled and
// never interrupts a read on cancellation, so for a cancellable context the
// adapter runs the command on another goroutine and returns ctx.Err() as
// soon as the context ends, leaving the connection to finish (and be
// returned to the pool) in the background. That costs a goroutine per
// command. Build the client with ContextTimeoutEnabled: true and a context
// with a deadline is left to go-redis, on the caller's goroutine (a cancel
// before the deadline then takes effect at the deadline at the latest);
// context.Background() never needs the goroutine.
//
// Release notifications use plain pub/sub on a single server, sharded pub/sub
// (SSUBSCRIBE, one connection per hash slot in use) on a ClusterClient, and
// one connection per hash tag on a Ring. go-redis's PubSub does not follow a
// slot that moves: the old node drops its sharded subscribers with a
// SUNSUBSCRIBE it sends unasked, which go-redis (v9.18) hands on as a
// Subscription message and nothing else. The adapter follows the slot,
// subscribing the slot's channels again on the node the slot went to
// (following MOVED, whatever the client's slot map still says), and waking
// their waiters once, as a release may have been published meanwhile.
package goredis
