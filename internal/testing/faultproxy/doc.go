// Package faultproxy is a loopback TCP proxy in front of a redis-server for
// fault tests: it cuts connections, delays traffic, makes Redis look
// unreachable, and forwards a command but drops its reply — once, or for
// every command that matches — then closes the client's connection or
// leaves it hanging. That is the fault behind an unknown outcome: the
// command ran, the client never learns it.
//
// It parses the RESP stream (RESP2 and RESP3) to know where each command
// and reply ends, and pairs replies with commands in order, pipelines
// included. A connection that subscribes is passed through untouched from
// then on.
package faultproxy
