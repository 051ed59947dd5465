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
// start-up. On a cluster the adapter follows MOVED, TRYAGAIN and CLUSTERDOWN
// replies itself (a few times, with a short pause): Redis sends them before
// running the command, so nothing that ran is sent again. A reply that
// never came is reported as an unknown outcome (lockbridge.ErrUnknownOutcome),
// never guessed.
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
// one connection per hash tag on a Ring.
package goredis
