package main

import (
	"fmt"

	"github.com/alicebob/miniredis/v2"
)

// embedded is an in-process Redis (miniredis) for the demo.
//
// miniredis does not count TTLs down by itself unless told to: ClockTTL makes
// every command first advance the TTLs by the wall-clock time elapsed, so a
// PX lease ends when it would on a real server (a key is gone for the first
// command after its deadline), with no ticker goroutine driving FastForward
// and no lag behind one. Its TIME, inside scripts too, is the real clock, as
// on a real server.
//
// Checked by embedded_test.go against every lock package: SETNX, GETSET,
// EVALSHA with the EVAL fallback on NOSCRIPT, TIME and
// redis.replicate_commands inside scripts, redis.pcall, SET … NX PX, PTTL,
// PUBLISH from a script to a plain SUBSCRIBE, HSET / HGETALL / HDEL and
// binary keys all work. Sharded pub/sub does not exist there: the demo uses a
// plain (non-cluster) client, so the locks publish with PUBLISH.
type embedded struct {
	m *miniredis.Miniredis
}

func startEmbedded() (*embedded, error) {
	m := miniredis.NewMiniRedis()
	m.ClockTTL(true)
	if err := m.Start(); err != nil {
		return nil, fmt.Errorf("start embedded redis: %w", err)
	}
	return &embedded{m: m}, nil
}

func (e *embedded) addr() string { return e.m.Addr() }

func (e *embedded) close() { e.m.Close() }
