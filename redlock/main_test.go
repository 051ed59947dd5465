package redlock_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the tests if any goroutine outlives them: the per-node
// goroutines of a round, the auto-refresher, and the drivers' calls watching
// a context.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
