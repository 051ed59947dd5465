// Package modernproto is the modern lock's protocol on one Redis node: its
// token, the Redis names of a lock, its four scripts, and the calls built on
// them — acquire, owner-checked release (with its release notification),
// owner-checked refresh and PTTL — each one script, one round trip, on one
// driver.Client.
//
// It holds no waiting loop and no lock lifetime: package modern runs these
// calls on its one client; package redlock runs them on each of N
// independent masters, with the same token and the same scripts, so a key
// written by either is the same bytes on the wire. docs/protocol.md
// specifies the scripts ("Modern" section).
package modernproto
