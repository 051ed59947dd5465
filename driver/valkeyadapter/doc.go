// Package valkeyadapter adapts github.com/valkey-io/valkey-go clients to
// driver.Client: whatever valkey.NewClient returns — a single server, a
// Valkey or Redis Cluster, a Sentinel-managed primary
// (ClientOption.Sentinel) or a standalone primary with replicas.
//
//	c, err := valkey.NewClient(valkey.ClientOption{InitAddress: []string{"localhost:6379"}})
//	…
//	locker := modern.New(valkeyadapter.New(c))
//
// It lives in a Go module of its own (valkey-go needs a newer Go than
// lockbridge), so go get github.com/lockbridge/lockbridge/driver/valkeyadapter.
//
// valkey-go is a fork of rueidis, and the adapter is the rueidis adapter's
// twin (both are built on one shared core); the package documentation of
// github.com/lockbridge/lockbridge/driver/rueidisadapter applies word for
// word. In short:
//
//   - No resends. Every command is built with Arbitrary(…).Build(), which
//     lacks the retryable flag valkey-go requires before it sends a command
//     again after a network error. A client built with ConnLifetime (whose
//     expiry makes the client resend a command that may have run) or of a
//     type valkey.NewClient does not return is refused: every call fails
//     with an error wrapping lockbridge.ErrInvalid, and Check says so at
//     start-up. MOVED and ASK, sent instead of running a command, are
//     followed by valkey-go, and TRYAGAIN and CLUSTERDOWN by the adapter,
//     after short pauses (driver/adapter.ClusterRetryFor).
//   - SETNX and GETSET go on the wire literally.
//   - Contexts are honoured; a reply that never comes holds the pipelined
//     connection until valkey-go's PING finds it silent (ConnWriteTimeout,
//     10 s by default, bounds it).
//   - Release notifications use pub/sub on a dedicated connection, and
//     sharded pub/sub (SSUBSCRIBE) per hash slot in a cluster, which
//     follows its slot to a new node after a resharding; a lost connection
//     ends the subscription with an error.
package valkeyadapter
