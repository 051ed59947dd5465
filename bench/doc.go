// Package bench holds lockbridge's benchmarks against bsm/redislock,
// redsync and rueidislock, and against the raw floor of each Redis client
// (go-redis, redigo, rueidis). It is its own module, so that the library's
// go.mod stays free of the peer libraries.
//
// The report (docs/performance.md) comes from the benchreport command:
//
//	make bench                       # from the repository root
//	cd bench && go run ./cmd/benchreport
//
// The same scenarios are standard benchmarks, for benchstat:
//
//	cd bench && go test -run '^$' -bench . -benchmem -count 6 | tee new.txt
//	benchstat old.txt new.txt
//
// Both start their own redis-server (internal/testing/redistest of the parent
// module), which must be on PATH or named by LOCKBRIDGE_REDIS_SERVER.
package bench
