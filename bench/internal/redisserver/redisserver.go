// Package redisserver starts the redis-server the benchmarks run against.
//
// It reuses github.com/lockbridge/lockbridge/internal/redistest, which wants a
// testing.TB: benchmarks pass their *testing.B, and the benchreport command,
// which is not a test, uses [Start], which drives redistest through a small
// testing.TB shim.
package redisserver

import (
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/lockbridge/lockbridge/internal/redistest"
)

// Server is a running redis-server. Close stops it.
type Server struct {
	*redistest.Server
	tb *shim
}

// Start starts one redis-server on a free loopback port.
func Start() (srv *Server, err error) {
	tb := &shim{}
	defer func() {
		if r := recover(); r != nil {
			f, ok := r.(fatal)
			if !ok {
				panic(r)
			}
			tb.cleanup()
			srv, err = nil, fmt.Errorf("%s", string(f))
		}
	}()
	s := redistest.Start(tb)
	return &Server{Server: s, tb: tb}, nil
}

// Close stops the server and removes its directory.
func (s *Server) Close() { s.tb.cleanup() }

// fatal is the panic value of shim.Fatalf.
type fatal string

// shim is the part of testing.TB that redistest uses. The embedded nil
// testing.TB only supplies the method set: calling any method not defined
// here panics.
type shim struct {
	testing.TB

	mu       sync.Mutex
	cleanups []func()
	failed   bool
}

func (*shim) Helper() {}

func (t *shim) Fatalf(format string, args ...any) {
	t.mu.Lock()
	t.failed = true
	t.mu.Unlock()
	panic(fatal(fmt.Sprintf(format, args...)))
}

func (t *shim) Errorf(format string, args ...any) {
	t.mu.Lock()
	t.failed = true
	t.mu.Unlock()
	fmt.Fprintf(os.Stderr, format+"\n", args...)
}

func (*shim) Logf(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }

func (t *shim) Failed() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.failed
}

func (t *shim) Cleanup(f func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.cleanups = append(t.cleanups, f)
}

func (t *shim) TempDir() string {
	dir, err := os.MkdirTemp("", "lockbridge-bench-")
	if err != nil {
		t.Fatalf("redisserver: %v", err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

// cleanup runs the registered cleanups, last first.
func (t *shim) cleanup() {
	t.mu.Lock()
	fs := t.cleanups
	t.cleanups = nil
	t.mu.Unlock()
	for i := len(fs) - 1; i >= 0; i-- {
		fs[i]()
	}
}
