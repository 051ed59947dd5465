package modern_test

import (
	"fmt"
	"os"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/lockbridge/lockbridge/modern"
)

// TestMain fails the run if any goroutine outlived the tests (refreshers,
// the notification hub's reader and linger timer, calls watching a
// context). A Locker's subscription lingers for DefaultNotifyLinger after
// its last wait: the check waits that long first, so a linger that does not
// end fails it. The examples start their own in-process Redis; the tests
// start real redis-servers through internal/testing/locktest.
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		time.Sleep(modern.DefaultNotifyLinger + 100*time.Millisecond)
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: errors on successful test run: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}
