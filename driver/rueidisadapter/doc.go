// Package rueidisadapter adapts github.com/redis/rueidis clients to
// driver.Client: whatever rueidis.NewClient returns — a single server, a
// Redis Cluster, a Sentinel-managed primary (ClientOption.Sentinel) or a
// standalone primary with replicas.
//
//	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{"localhost:6379"}})
//	…
//	locker := modern.New(rueidisadapter.New(c))
//
// It lives in a Go module of its own (rueidis needs a newer Go than
// lockbridge), so go get github.com/lockbridge/lockbridge/driver/rueidisadapter.
//
// # No resends
//
// A command that changes lock state must never be sent twice after it may
// have reached Redis: a resent release finds the next holder's fresh value
// and deletes it. rueidis retries a command after a network error only when
// the command carries its retryable flag, which its builder sets on
// read-only commands (and on Arbitrary(…).ReadOnly()); the adapter builds
// every command with Arbitrary(…).Build(), which never has it, so no
// DisableRetry is needed. The one path on which rueidis still sends a
// command again is a connection whose ConnLifetime ended under it: the
// command, which may have run, fails with an internal "connection is
// expired" error and the client sends it again on a new connection. New
// refuses a client built with ConnLifetime, and a client of any type
// rueidis.NewClient does not return (a wrapper, a mock), for it cannot tell:
// every call then fails with an error wrapping lockbridge.ErrInvalid that
// names the reason, and Check says so at start-up.
//
// In a cluster rueidis follows MOVED and ASK replies itself (bounded by
// ClusterOption.MaxMovedRedirections, by the context otherwise), and the
// adapter follows TRYAGAIN and CLUSTERDOWN, which rueidis returns for a
// command without its retryable flag: it sends the command again after
// pauses of 2 ms doubling to 100 ms, for at most 2 s in all
// (driver/adapter.ClusterRetryFor) or until the context ends. Redis sends
// each of these replies instead of running the command, so the command that
// follows is not a resend of anything that ran; a slot migrating with its
// keys answers TRYAGAIN to the release script (whose channel is one of its
// keys) until the move ends. A reply that never came is reported as an
// unknown outcome (lockbridge.ErrUnknownOutcome), never guessed.
//
// Commands go on the wire as the locks name them: SETNX and GETSET are sent
// literally, never rewritten.
//
// # Pipelining and contexts
//
// rueidis pipelines the commands of concurrent callers on one connection
// per node. Every call honours its context: with a deadline, rueidis applies
// it (a cancel before the deadline takes effect at the latest at the
// deadline when the connection is idle and the command is written on the
// caller's goroutine); a context that can be cancelled but has no deadline
// runs the command on another goroutine and returns when it ends.
//
// A reply that never comes holds the connection, and the commands pipelined
// behind it, until rueidis finds it silent: a PING after
// Dialer.KeepAlive (1 s by default) without replies, answered within
// ConnWriteTimeout (10 s by default). Lower ConnWriteTimeout to bound how
// long a hung server holds other locks' commands.
//
// # Notifications
//
// Release notifications use plain pub/sub on one dedicated connection
// (Dedicate and SetPubSubHooks) on a single server or a Sentinel primary,
// and sharded pub/sub (SSUBSCRIBE) in a cluster: one dedicated connection
// per hash slot in use, to the node serving it, closed when its last
// channel is unsubscribed. A lost connection ends the subscription with an
// error rather than silently resubscribing, so a waiter looks at the lock
// again instead of missing a release.
//
// When a slot moves to another node, the old node drops the slot's sharded
// subscribers (a SUNSUBSCRIBE it sends unasked, which rueidis passes to the
// hooks and otherwise ignores, rueidis#691), and a SSUBSCRIBE sent by an
// old slot map is refused with MOVED. The adapter then dedicates a
// connection on the node the slot went to (Nodes()[addr], when MOVED named
// it: rueidis reads its slot map again only after a random delay of up to a
// second), subscribes the slot's channels there, and wakes their waiters
// once, as a release may have been published meanwhile.
package rueidisadapter
