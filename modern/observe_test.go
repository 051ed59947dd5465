package modern

import (
	"testing"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/internal/testing/logtest"
)

// The auto-refresh logs the refresh that found the lock gone, and the loss.
func TestAutoRefreshLogsTheLoss(t *testing.T) {
	tg := locktest.Single(t)[0]
	rec, log := logtest.New()
	logtest.CheckLossLogged(t, New(tg.Client, WithAutoRefresh(), WithTelemetry(lockbridge.Telemetry{Logger: log})), rec,
		"modern", logtest.Del(t,
			tg.Client))
}
