package migrate

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/lockbridge/lockbridge/internal/testing/redistest"
)

// exampleAddr is the redis-server the runnable examples talk to; the
// behaviour tests start their own through internal/testing/locktest.
var exampleAddr string

// TestMain starts the examples' server, runs the tests, stops it, and fails
// the run if a follower, refresher or subscription goroutine outlived them.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(redistest.WithServer(m, func(addr string) { exampleAddr = addr }))
}
