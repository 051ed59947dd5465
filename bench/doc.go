// Package bench holds lockbridge's benchmarks against bsm/redislock,
// redsync and rueidislock, and against the raw floor of each Redis client
// (go-redis, redigo, rueidis). It is its own module, so that the library's
// go.mod stays free of the peer libraries.
//
// The report (docs/performance.md) comes from the benchreport command, and
// its scale section (many locks on clusters, many waiters, added round
// trips) from the benchscale command:
//
//	make bench                       # from the repository root
//	make bench-scale
//	cd bench && go run ./cmd/benchreport
//	cd bench && go run ./cmd/benchscale
//
// The same scenarios are standard benchmarks, for benchstat:
//
//	cd bench && go test -run '^$' -bench . -benchmem -count 6 | tee new.txt
//	benchstat old.txt new.txt
//
// They start their own redis-servers (internal/testing/redistest of the
// parent module), which must be on PATH or named by LOCKBRIDGE_REDIS_SERVER.
package bench
