package legacy_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/lockbridge/lockbridge/internal/testing/redistest"
)

// redisAddr is the address of the redis-server the examples talk to,
// started by TestMain (the tests start their own through locktest).
var redisAddr string

// TestMain starts the examples' redis-server, runs the tests, stops the
// server, and then fails the run if any goroutine outlived the tests.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(redistest.WithServer(m, func(addr string) { redisAddr = addr }))
}
