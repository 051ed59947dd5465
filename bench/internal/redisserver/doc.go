// Package redisserver starts the redis-servers the benchmarks run against —
// one server or a Redis Cluster — through internal/testing/redistest
// (Standalone, StandaloneCluster: the report commands are no tests).
package redisserver
