package redisson_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/lockbridge/lockbridge/internal/testing/redistest"
)

// exampleAddr is the address of the redis-server the runnable examples talk
// to; the behaviour tests start their own servers through internal/testing/locktest.
var exampleAddr string

// TestMain starts the examples' redis-server, runs the tests, stops the
// server, and fails the run if any goroutine outlived the tests (watchdogs,
// the subscription's reader).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(redistest.WithServer(m, func(addr string) { exampleAddr = addr }))
}
