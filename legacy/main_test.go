package legacy_test

import (
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/lockbridge/lockbridge/internal/redistest"
	"go.uber.org/goleak"
)

// redisAddr is the address of the redis-server the examples talk to,
// started by TestMain (the tests start their own through locktest).
var redisAddr string

// TestMain starts the examples' redis-server, runs the tests, stops the
// server, and then fails the run if any goroutine outlived the tests.
func TestMain(m *testing.M) { goleak.VerifyTestMain(withServer{m}) }

// withServer runs the tests with the examples' redis-server up.
type withServer struct{ m *testing.M }

func (w withServer) Run() (code int) {
	tb := &mainTB{}
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintln(os.Stderr, r)
			code = 1
		}
		tb.cleanup()
	}()
	redisAddr = redistest.Start(tb).Addr()
	return w.m.Run()
}

// mainTB is the testing.TB that redistest needs outside any test: enough of
// it for Start (Helper, Fatalf, TempDir, Cleanup, Failed, Logf, Errorf).
// Any other method would panic on the nil embedded TB.
type mainTB struct {
	testing.TB
	mu       sync.Mutex
	cleanups []func()
	dirs     []string
	failed   bool
}

func (*mainTB) Helper() {}

func (tb *mainTB) Fatalf(format string, args ...any) {
	tb.Errorf(format, args...)
	panic("TestMain: " + fmt.Sprintf(format, args...))
}

func (tb *mainTB) Errorf(format string, args ...any) {
	tb.mu.Lock()
	tb.failed = true
	tb.mu.Unlock()
	tb.Logf(format, args...)
}

func (*mainTB) Logf(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }

func (tb *mainTB) Failed() bool {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	return tb.failed
}

func (tb *mainTB) Cleanup(f func()) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	tb.cleanups = append(tb.cleanups, f)
}

func (tb *mainTB) TempDir() string {
	dir, err := os.MkdirTemp("", "legacy-example-")
	if err != nil {
		tb.Fatalf("TempDir: %v", err)
	}
	tb.mu.Lock()
	tb.dirs = append(tb.dirs, dir)
	tb.mu.Unlock()
	return dir
}

func (tb *mainTB) cleanup() {
	tb.mu.Lock()
	fs, dirs := tb.cleanups, tb.dirs
	tb.cleanups, tb.dirs = nil, nil
	tb.mu.Unlock()
	for i := len(fs) - 1; i >= 0; i-- {
		fs[i]()
	}
	for _, d := range dirs {
		_ = os.RemoveAll(d)
	}
}
