// Package adapter is for authors of a driver.Client for another Redis
// client library: implement Conn (one command at a time, never resent after
// it may have reached the server; errors before the send marked with
// NotSent) and PubSubConn, and Wrap builds the driver.Client — EVALSHA with
// its EVAL fallback, the unknown-outcome rule, WAIT on a pinned connection
// (Pinner) — on top. A Conn whose library takes a command's words as
// strings may also implement WordsConn, and receives scripts and SET NX PX
// as strings, with no word boxed into an any.
//
// In Redis Cluster, the Client of Wrap follows the replies by which a node
// refuses a command instead of running it — MOVED, ASK, TRYAGAIN,
// CLUSTERDOWN — since sending the command again is then its first run:
// through a Conn's Redirector (DoAt, with ASKING for an ASK) when the
// library leaves redirects to its caller, and after short pauses
// otherwise, within MaxRedirects and ClusterRetryFor and the caller's
// context. Sharded subscriptions (NewGroupedSubscription) follow their slot
// when it moves to another node.
//
// The conformance suite, package adaptertest at the module root, checks an
// adapter against real redis-servers, and adaptertest.Reshard checks a
// cluster adapter while slots move with their keys. Users of the locks never need this
// package: they take a ready adapter (driver/goredis, driver/redigoadapter,
// driver/rueidisadapter, driver/valkeyadapter).
package adapter
