package redisson

import (
	"testing"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/internal/testing/logtest"
)

// The watchdog logs the renewal that found the field gone (a forceUnlock
// from elsewhere), and the loss.
func TestWatchdogLogsTheLoss(t *testing.T) {
	tg := locktest.Single(t)[0]
	rec, log := logtest.New()
	logtest.CheckLossLogged(t, New(tg.Client, WithWatchdog(), WithTelemetry(lockbridge.Telemetry{Logger: log})), rec,
		"redisson", logtest.Del(t, tg.Client))
}
