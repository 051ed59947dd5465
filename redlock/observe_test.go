package redlock_test

import (
	"testing"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/internal/testing/logtest"
	"github.com/lockbridge/lockbridge/redlock"
)

// The auto-refresh logs the loss of a lock deleted from a majority of
// nodes behind its holder's back.
func TestAutoRefreshLogsTheLoss(t *testing.T) {
	f := startFleet(t, 3)
	rec, log := logtest.New()
	l := redlock.New(f.clients, redlock.WithAutoRefresh(), redlock.WithTelemetry(lockbridge.Telemetry{Logger: log}))
	logtest.CheckLossLogged(t, l, rec, "redlock", func(key string) { f.del(t, key, 0, 1) })
}
