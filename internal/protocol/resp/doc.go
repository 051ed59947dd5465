// Package resp is a minimal RESP2 client connection for tooling that must
// not depend on a Redis client library: the test fixtures (PING, INFO,
// CLUSTER commands) and the benchmarks' MONITOR reader. The locks talk to
// Redis through driver.Client, never through this.
package resp
