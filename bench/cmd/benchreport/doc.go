// Command benchreport runs lockbridge's benchmarks side by side with
// bsm/redislock and redsync against a redis-server it starts itself, and
// writes docs/performance.md, the hand-off chart and the raw results.
//
// Run it with make bench from the repository root, or from bench/:
//
//	go run ./cmd/benchreport -out ../docs/performance.md
package main
