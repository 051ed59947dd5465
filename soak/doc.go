// Package soak runs a mixed fleet of lockers under real faults, on real
// redis-servers, and counts overlaps with a guard the locks cannot fool.
//
// The fleet: the Java seed replay (internal/testing/javareplay), legacy atomic and
// classic, migrate in every pair of phases the controller lets run side by
// side (legacy+dual-write, dual-write+dual-read, dual-read+modern,
// dual-write+modern, each pair on its own keys), modern with auto-refresh
// and fencing, and redlock over three servers. Each group of workers
// contends for its own lock names; one group of Java workers alone is the
// baseline the Java scheme's own overlaps are measured against. Every
// worker is one client process: its own go-redis client (never resending),
// through its own fault proxy (internal/testing/faultproxy), with its own clock
// offset of up to ±5 s (legacy.WithClock, migrate.WithLegacy) and its own
// lease (every group mixes 400 ms, 800 ms and 1.6 s). Four more groups run
// the legacy and legacy+dual-write fleets with one clock among the clients,
// 5 s ahead of the server's or 5 s behind it: no takeover is early there, so
// an overlap a Go lock caused by trusting the server's clock would stand
// out. Three groups (modern, legacy with a Java client, dual-write+dual-read)
// run on a primary with a replica that fails over, and three (modern,
// legacy with a Java client, dual-read+modern) on a server under eviction
// pressure.
//
// The faults: connections cut, replies dropped after the command ran,
// latency episodes of 0–300 ms, holders pausing from 0.7 to 1.5 leases
// inside the critical section before their release (an auto-refresh holder
// stalls instead: its connection, refresher included, is held past the
// lease), restarts of the main server with appendonly yes and appendfsync
// always (nothing acknowledged is lost), restarts of a server without
// persistence (data loss, counted apart), failovers to a lagging replica
// and eviction.
//
// Failover (failover_test.go): one per 20 s. The replica is cut off from
// the primary (REPLICAOF a dead port) for 0.2–2.5 s while the fleet runs —
// or, one failover in four, allowed to catch up — then the primary's writes
// stop (CLIENT PAUSE WRITE), every key there is read, the primary is killed
// (SIGKILL), the replica promoted (REPLICAOF NO ONE) and read before any
// client reaches it, and the workers' proxies are pointed at it; the old
// primary comes back, empty, as its replica.
//
// Eviction (evict_test.go): maxmemory 3 MB above the server's starting use,
// a filler writing 4 KB values with TTLs 100 times a second, and the
// policy changed every 10 s through volatile-lru, allkeys-lru,
// volatile-ttl, allkeys-random, volatile-random, allkeys-lfu and
// volatile-lfu. The server publishes keyspace notifications; an observer
// past the proxies receives those of the lock keys in the server's order,
// between markers PUBLISHed every 5 ms, which put each event in an interval
// of the common clock. A migrate controller steps a namespace of its own
// there up and down, unforced, once a second; its steps and refusals (by
// blocker kind) are counted by policy family, never failed, and a namespace
// the policy evicted is initialised again or repaired, unforced, when the
// controller allows it.
//
// The guard: each hold is, on the test process' monotonic clock, the
// interval from its acquire's return to the earlier of its release's start
// and the start of its acquire call plus the lease (for an auto-refresh
// lock: the last moment Done was seen open with ExpiresAt, the holder's
// view of its lease, still ahead — a loaded machine can run Done's timer
// late, and the figures count how often it did). Two holds of one key by
// different workers that intersect are an overlap. Each overlap is
// classified by what let the second holder in, from a log of the legacy
// key's traffic kept by a recording driver.Client: (a) nothing the Java
// scheme allows — Go code; the goal is none; (b) what the Java scheme
// itself allows: a takeover judged by a clock running ahead of the
// writer's, a losing GETSET that overwrote a live value, a literal DEL (by
// a Java client or a Go locker in classic mode, which sends the Java
// commands literally), or the rightful holder's release after such a
// takeover; (c) a restart of a server without persistence; (d) a failover
// that lost the first holder's write: it was on the old primary when writes
// stopped and the new primary lacked it (the key absent, another value, or
// an earlier expiry: a refresh lost), and the second holder got in after the
// promotion; (e) an eviction of the first holder's key: on a key both
// wrote, an eviction came right after a set the first holder's acquire can
// have made, with no deletion or expiry between, and a set the second's
// acquire can have made came after it. Classes (c), (d) and (e) are
// decided by the evidence, never by default: an overlap on these servers
// that the evidence does not explain is classified like any other. Class
// (b) also covers a takeover judged by a clock running ahead whose reply
// was lost: it is no hold, but its value replaced the holder's.
package soak
