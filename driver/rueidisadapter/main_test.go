package rueidisadapter_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if any goroutine outlives them: every
// subscription and every call watching a context must have stopped. The
// client's own delayed close of the connections a cluster topology refresh
// or a MOVED replaced (it sleeps 5 s first), and its delayed topology
// refresh after a MOVED (a random wait of up to a second, which Close does
// not cut short), are not the adapter's.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreAnyFunction("github.com/redis/rueidis.(*clusterClient)._refresh.func2"),
		goleak.IgnoreAnyFunction("github.com/redis/rueidis.(*clusterClient).redirectOrNew.func1"),
		goleak.IgnoreAnyFunction("github.com/redis/rueidis.(*call).DelayDo.func1"))
}
