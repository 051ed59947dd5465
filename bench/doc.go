// Package bench holds lockbridge's benchmarks against bsm/redislock and
// redsync. It is its own module, so that the library's go.mod stays free of
// the peer libraries.
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
// The standard benchmarks also run modern through the rueidis adapter
// (modern-rueidis: rueidis pipelines the commands of concurrent callers on
// one connection) in BenchmarkCycle, BenchmarkHandoff and
// BenchmarkManyKeys; the report does not include it yet. On two shared
// cores, 64 goroutines on 10,000 keys (BenchmarkManyKeys) took about
// 23 µs per cycle through rueidis against about 45 µs through go-redis.
//
// Both start their own redis-server (internal/testing/redistest of the parent
// module), which must be on PATH or named by LOCKBRIDGE_REDIS_SERVER.
package bench
