// Package machine describes where the benchmarks ran: the CPU, the kernel,
// Go, the modules' versions, the load, and the CPU time other processes took
// meanwhile, for the reports' machine tables.
package machine
