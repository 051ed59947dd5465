package rueidisadapter_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if any goroutine outlives them: every
// subscription and every call watching a context must have stopped.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
