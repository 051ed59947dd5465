package redistest

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"
)

// StartSentinel starts a Redis Sentinel (redis-server --sentinel) that
// monitors the primary at addr, "127.0.0.1:PORT", under the name master,
// with a quorum of one, and returns once it answers PING. A client asking
// it for master gets addr. It is stopped when the test finishes.
func StartSentinel(tb testing.TB, addr, master string) *Server {
	tb.Helper()
	s := newServer(tb, serverBinary(tb), false)
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		tb.Fatalf("redistest: StartSentinel(%q): %v", addr, err)
	}
	// Sentinel rewrites its configuration file, so it gets one of its own.
	s.conf = filepath.Join(s.dir, "sentinel.conf")
	conf := fmt.Sprintf("sentinel monitor %s %s %s 1\n", master, host, port)
	if err := os.WriteFile(s.conf, []byte(conf), 0o600); err != nil {
		tb.Fatalf("redistest: writing %s: %v", s.conf, err)
	}
	s.extra = []string{"--sentinel"}
	if err := s.launch(); err != nil {
		tb.Fatalf("redistest: starting a sentinel for %s: %v\n%s", addr, err, s.logReport())
	}
	return s
}
