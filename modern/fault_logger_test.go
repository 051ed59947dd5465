package modern_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/modern"
)

// stuckHandler is a slog handler whose error records block until release
// is closed: a handler writing to a pipe nobody reads, a log shipper that
// is down. entered is closed when the first one arrives.
type stuckHandler struct {
	entered chan struct{}
	release chan struct{}
}

func (h *stuckHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h *stuckHandler) Handle(_ context.Context, r slog.Record) error {
	if r.Level >= slog.LevelError {
		select {
		case <-h.entered:
		default:
			close(h.entered)
		}
		<-h.release
	}
	return nil
}

func (h *stuckHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *stuckHandler) WithGroup(string) slog.Handler      { return h }

// Review 8, finding 1 (a lease whose end waits for something in flight):
// the auto-refresh finds the key gone (FLUSHALL behind the holder's back)
// and ends the lease as lost. The loss is logged at error level before
// Done closes, and the give-up timer is stopped first: with a logger that
// blocks, Done stays open past the lease's end — the holder goes on while
// another client holds the lock, with nothing left that will close Done.
// Done must close by the give-up point whatever the logger does.
func TestFaultBlockedLoggerHoldsDoneOpen(t *testing.T) {
	tg := locktest.Single(t)[0]
	ctx := locktest.Ctx(t)
	key := locktest.Key(t, "k")
	h := &stuckHandler{entered: make(chan struct{}), release: make(chan struct{})}
	defer close(h.release)
	l := modern.New(tg.Client, modern.WithAutoRefresh(), modern.WithTelemetry(lockbridge.Telemetry{Logger: slog.New(h)}))
	lk, err := l.TryLock(ctx, key, 600*time.Millisecond)
	require.NoError(t, err)
	done := lk.Done()

	locktest.Do(t, tg.Client, "FLUSHALL")
	select {
	case <-h.entered: // the refresh found it gone and logs the loss
	case <-time.After(5 * time.Second):
		t.Fatal("the auto-refresh did not find the lock gone")
	}
	other, err := modern.New(tg.Client).TryLock(ctx, key, time.Minute)
	require.NoError(t, err, "another client holds the lock now")
	defer func() { _ = other.Unlock(ctx) }()

	select {
	case <-done:
	case <-time.After(time.Until(lk.ExpiresAt()) + 200*time.Millisecond):
		t.Fatalf("Done still open 200ms past the lease's end (Err: %v) while another client holds the lock: "+
			"the loss waits for the logger", lk.Err())
	}
	require.ErrorIs(t, lk.Err(), lockbridge.ErrLost)
}
