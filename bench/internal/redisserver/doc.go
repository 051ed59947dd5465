// Package redisserver starts the redis-server the benchmarks run against,
// through internal/testing/redistest (Standalone: the benchreport command is no
// test).
package redisserver
