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
// out.
//
// The faults: connections cut, replies dropped after the command ran,
// latency episodes of 0–300 ms, holders pausing from 0.7 to 1.5 leases
// inside the critical section before their release (an auto-refresh holder
// stalls instead: its connection, refresher included, is held past the
// lease), restarts of the main server with appendonly yes and appendfsync
// always (nothing acknowledged is lost), and restarts of a server without
// persistence (data loss, counted apart).
//
// The guard: each hold is, on the test process' monotonic clock, the
// interval from its acquire's return to the earlier of its release's start
// and the start of its acquire call plus the lease (for an auto-refresh
// lock: the last moment Done was seen open). Two holds of one key by
// different workers that intersect are an overlap. Each overlap is
// classified by what let the second holder in, from a log of the legacy
// key's traffic kept by a recording driver.Client: (a) nothing the Java
// scheme allows — Go code; the goal is none; (b) what the Java scheme
// itself allows: a takeover judged by a clock running ahead of the
// writer's, a losing GETSET that overwrote a live value, a literal DEL (by
// a Java client or a Go locker in classic mode, which sends the Java
// commands literally), or the rightful holder's release after such a
// takeover; (c) a restart of a server without persistence.
package soak
