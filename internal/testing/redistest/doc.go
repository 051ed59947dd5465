// Package redistest starts real redis-server processes for tests.
//
// Nothing here is a mock: [Start] and [StartN] run one redis-server process
// per [Server] on a free loopback port, and [StartCluster] runs three
// cluster-enabled processes, assigns all 16384 hash slots across them and
// returns once every node reports cluster_state:ok. [StartReplicated] runs a
// primary and a replica of it (--replicaof), for failovers: the replica can
// be synced, detached from the primary so that it lags behind, and promoted
// (REPLICAOF NO ONE) after the primary is killed, and the killed primary
// rejoins as a replica of the promoted one (for failover after failover). Each process gets its own
// temporary directory (holding redis.log and, for cluster nodes, nodes.conf),
// has persistence switched off (--save "" --appendonly no; [StartPersistent]
// runs one with an append-only file fsynced on every write), and is stopped
// by testing.TB.Cleanup; when the test has failed, the last lines of each
// server's log are written to the test output.
//
// A Server can be stopped, killed, restarted on the same port with an empty
// dataset, and paused with SIGSTOP to simulate a hung server, so that tests can
// exercise failure handling against the real thing.
//
// The redis-server binary is found with exec.LookPath, or taken from the
// LOCKBRIDGE_REDIS_SERVER environment variable when that is set. When it
// cannot be found the test fails (it is never skipped) with a message that
// says how to install it: "sudo apt-get install -y redis-server" on
// Debian/Ubuntu, "brew install redis" on macOS, or "make test", whose
// scripts/setup.sh installs it.
//
// The package talks to the servers over raw TCP with a minimal RESP writer and
// reader, so it does not depend on any Redis client library. It relies on Unix
// signals and therefore supports Unix-like systems only.
//
// The constructors, and [Server.Restart], report failure with tb.Fatalf, so
// they must be called from the goroutine running the test. The other methods
// may be called from any goroutine.
package redistest
