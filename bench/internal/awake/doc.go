// Package awake keeps the machine's cores from sleeping while a measurement
// runs, through the kernel's CPU latency request (PM QoS,
// /dev/cpu_dma_latency).
//
// On a virtual machine whose idle cores halt, a core that halted takes tens of
// microseconds to wake: longer than a loopback round trip. A ping-pong between
// a client and a redis-server then pays that wake-up once or twice per round
// trip or not at all, by chance, and a cycle of two round trips takes anywhere
// from 35 to 160 µs. Held, a latency request of 0 µs makes the idle cores poll
// instead of halting: round trips cost what the client, the kernel and the
// server spend, as on a busy host.
package awake
