// Package monitor counts, on the server, the commands a piece of code sends.
//
// A round trip is one top-level command a client sends. Redis' own counters
// (INFO commandstats, total_commands_processed) also count the commands a Lua
// script runs inside EVALSHA, so they cannot tell one EVALSHA from three plain
// commands. MONITOR can: it prints every top-level command with the client's
// address and every command run inside a script with the source "lua". A
// Counter reads MONITOR while the measured code runs and counts both kinds;
// Conn is a tiny RESP client for set-up commands, whose own commands the
// Counter leaves out.
package monitor
