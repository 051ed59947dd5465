// Package scripttest checks that a Lua script's header and its Go caller
// agree: the KEYS and ARGV the header declares (lines "-- KEYS[n]  …" and
// "-- ARGV[n]  …") against what the caller's argument struct builds, and the
// reply codes the header names (a "Replies" block of lines "--   Name = n …")
// against the Go constants of the same names.
package scripttest
