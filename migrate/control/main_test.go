package control

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the run if a follower, refresher or subscription goroutine
// outlived the tests. The examples start their own in-process Redis; the
// tests start real redis-servers through internal/testing/locktest.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
