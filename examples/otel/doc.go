// Command otel shows lockbridge's metrics and spans with the OpenTelemetry
// SDK and a Prometheus exporter: it runs lock cycles (a modern lock with
// fencing and auto-refresh, contended, waited for, lost; and a migrating
// fleet's client and controller) against the Redis at -redis and serves
// the metrics at -listen/metrics. It is a module of its own, so the SDK
// and the exporter never enter the library's go.mod; its test runs one
// cycle on a real redis-server and reads the metrics back from the
// exporter. docs/observability.md lists every instrument.
//
//	go run . -redis 127.0.0.1:6379 -listen :2112
//	curl -s localhost:2112/metrics | grep lockbridge
package main
