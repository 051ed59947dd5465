package redisson_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the run if any goroutine outlived the tests (watchdogs,
// the subscription's reader). The examples start their own in-process
// Redis; the tests start real redis-servers through internal/testing/locktest.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
