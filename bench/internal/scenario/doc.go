// Package scenario runs the benchmark scenarios against any impls.Locker. The
// benchreport command and the go test benchmarks both use it.
package scenario
