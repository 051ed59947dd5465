// Command benchreport runs lockbridge's benchmarks side by side with
// bsm/redislock, redsync, rueidislock and the raw floor of each client
// (go-redis, redigo, rueidis) against a redis-server it starts itself, and
// writes docs/performance.md, the hand-off chart and the raw results.
// Every scenario runs in rounds of short blocks (at most 100 cycles), the
// order of the implementations rotating from round to round; ratios are
// paired within a round. -render rewrites the report from a raw results
// file without measuring (after editing analysis.md).
//
// Run it with make bench from the repository root, or from bench/:
//
//	go run ./cmd/benchreport -out ../docs/performance.md
package main
