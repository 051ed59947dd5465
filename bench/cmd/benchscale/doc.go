// Command benchscale measures lockbridge at scale, side by side with
// bsm/redislock, rueidislock and the raw floor of each client, and writes
// its section of docs/performance.md (between "<!-- begin bench-scale -->"
// and "<!-- end bench-scale -->"), its charts and its raw results:
//
//   - the uncontended cycle, one truth: every implementation's cycles run in
//     turn with its client's floor (the minimal correct token lock), with the
//     cores kept awake and free to halt, and where the extra time goes
//     (client CPU, server time, round trips);
//   - many locks on a cluster: 64 goroutines over 1,000 and 100,000 keys on
//     one server and on clusters of 1, 3 and 6 primaries, modern and migrate
//     in each phase on go-redis and rueidis: server CPU per acquisition and
//     how the load spreads over the primaries;
//   - the hand-off on a cluster: 8 and 64 waiters on one key, each on a
//     locker and client of its own, woken by SPUBLISH;
//   - a real network: 0.5 ms and 2 ms of added round trip through a proxy
//     that delays every frame without serializing them
//     (bench/internal/delayproxy): the cycle, the hand-off and many locks.
//
// It starts its own redis-servers. Run it with make bench-scale from the
// repository root (about 6 minutes on two cores), or from bench/:
//
//	go run ./cmd/benchscale -out ../docs/performance.md
//
// -quick makes a short run that checks everything works; -render rewrites
// the section from a raw results file without measuring.
package main
