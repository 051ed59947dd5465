package redistest

import (
	"fmt"
	"os"
	"sync"
	"testing"
)

// Standalone starts one redis-server outside any test, for a tool such as
// the benchmark report. stop stops it and removes its directory. A missing
// redis-server is an error naming the install command.
func Standalone() (srv *Server, stop func(), err error) {
	tb := &mainTB{}
	defer func() {
		if r := recover(); r != nil {
			f, ok := r.(fatal)
			if !ok {
				panic(r)
			}
			tb.cleanup()
			srv, stop, err = nil, nil, fmt.Errorf("%s", string(f))
		}
	}()
	return Start(tb), tb.cleanup, nil
}

// StandaloneCluster is StartClusterN outside any test: n masters, stopped
// and removed by stop.
func StandaloneCluster(n int) (c *Cluster, stop func(), err error) {
	tb := &mainTB{}
	defer func() {
		if r := recover(); r != nil {
			f, ok := r.(fatal)
			if !ok {
				panic(r)
			}
			tb.cleanup()
			c, stop, err = nil, nil, fmt.Errorf("%s", string(f))
		}
	}()
	return StartClusterN(tb, n), tb.cleanup, nil
}

// fatal is the panic value of mainTB.Fatalf.
type fatal string

// mainTB is the part of testing.TB that Start uses, outside any test. The
// embedded nil testing.TB only supplies the method set: any other method
// panics.
type mainTB struct {
	testing.TB

	mu       sync.Mutex
	cleanups []func()
	failed   bool
}

func (*mainTB) Helper() {}

func (t *mainTB) Fatalf(format string, args ...any) {
	t.mu.Lock()
	t.failed = true
	t.mu.Unlock()
	panic(fatal(fmt.Sprintf(format, args...)))
}

func (t *mainTB) Errorf(format string, args ...any) {
	t.mu.Lock()
	t.failed = true
	t.mu.Unlock()
	fmt.Fprintf(os.Stderr, format+"\n", args...)
}

func (*mainTB) Logf(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }

func (t *mainTB) Failed() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.failed
}

func (t *mainTB) Cleanup(f func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.cleanups = append(t.cleanups, f)
}

func (t *mainTB) TempDir() string {
	dir, err := os.MkdirTemp("", "lockbridge-redis-")
	if err != nil {
		t.Fatalf("redistest: %v", err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

// cleanup runs the registered cleanups, last first.
func (t *mainTB) cleanup() {
	t.mu.Lock()
	fs := t.cleanups
	t.cleanups = nil
	t.mu.Unlock()
	for i := len(fs) - 1; i >= 0; i-- {
		fs[i]()
	}
}
