package modern_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the run if any goroutine outlived the tests (refreshers,
// the notification hub's reader, calls watching a context). The examples
// start their own in-process Redis; the tests start real redis-servers
// through internal/testing/locktest.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
