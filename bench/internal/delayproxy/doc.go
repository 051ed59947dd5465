// Package delayproxy is a loopback TCP proxy that adds a fixed latency to
// every byte in both directions, as a network link would, without
// serializing: each chunk read from one side is written to the other a fixed
// time after it arrived, while the chunks read after it are already on their
// way. A pipelined client keeps its pipeline full; a round trip grows by the
// delay, not by the number of commands in flight. (The kernel of the
// benchmark machine has no netem; internal/testing/faultproxy's Delay sleeps
// before each frame in turn, which serializes frames.)
//
// The waits are absolute-deadline sleeps on a locked OS thread with a timer
// slack of 1 ns (the Go runtime's timers round sub-millisecond sleeps up to a
// millisecond when idle): each chunk leaves 10–30 µs after its due time on
// an idle machine. Measure the round trip through the proxy rather than
// assume it.
//
// A sleeping deliverer holds one of the Go scheduler's Ps until the runtime
// takes it back, which can take up to 10 ms: run the proxy in a process of
// its own with GOMAXPROCS two above the cores it may use, or the goroutines
// reading the sockets wait for a P (a proxy sharing GOMAXPROCS 2 with 20 busy
// connections made 2 ms round trips take 13).
package delayproxy
