// Package goredis adapts github.com/redis/go-redis/v9 clients to driver.Client:
// *redis.Client, *redis.ClusterClient, *redis.Ring and failover clients, or
// anything else that implements redis.UniversalClient.
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
