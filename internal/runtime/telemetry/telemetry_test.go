package telemetry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/internal/testing/logtest"
)

func TestOutcome(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{nil, OutcomeObtained},
		{fmt.Errorf("x: %w", lockbridge.ErrNotObtained), OutcomeNotObtained},
		{fmt.Errorf("x: %w: %w", lockbridge.ErrNotObtained, context.DeadlineExceeded), OutcomeNotObtained},
		{fmt.Errorf("x: %w", lockbridge.ErrUnknownOutcome), OutcomeUnknown},
		{fmt.Errorf("x: %w: %w", lockbridge.ErrNotObtained, lockbridge.ErrUnknownOutcome), OutcomeUnknown},
		{fmt.Errorf("x: %w", lockbridge.ErrInvalid), OutcomeInvalid},
		{errors.New("connection refused"), OutcomeError},
	} {
		assert.Equal(t, tc.want, Outcome(tc.err), "%v", tc.err)
	}
}

// An off T (nil, or from empty Settings) costs nothing on the hot path.
func TestOffAllocatesNothing(t *testing.T) {
	ctx := context.Background()
	f := func(context.Context, string, time.Duration) (lockbridge.Lock, error) {
		return nil, lockbridge.ErrNotObtained
	}
	for name, tel := range map[string]*T{"nil": nil, "empty": New("modern", Settings{})} {
		allocs := testing.AllocsPerRun(100, func() {
			_, _ = Acquire(ctx, tel, OpTryLock, f, "k", time.Second)
			tel.Contended(ctx)
			tel.Waited(ctx, time.Millisecond)
			tel.Refreshed(ctx, "k", OutcomeRefreshed, nil)
			tel.Phase(ctx, "ns", "id", 2, "dual-write")
			tel.Sighted(ctx, "ns")
		})
		assert.Zero(t, allocs, name)
	}
}

func TestLogsBackgroundEvents(t *testing.T) {
	rec, log := logtest.New()
	tel := New("redisson", Settings{Logger: log})
	ctx := context.Background()
	tel.Refreshed(ctx, "k", OutcomeRefreshed, nil)
	assert.Empty(t, rec.Records(""), "a good refresh is not logged")
	tel.Refreshed(ctx, "k", OutcomeError, errors.New("i/o timeout"))
	tel.Lost(ctx, "k", errors.New("gone"))
	tel.Refreshed(ctx, "k", OutcomeNotHeld, errors.New("gone"))
	r := rec.Records("background refresh failed")
	require.Len(t, r, 1, "a not-held refresh is logged as the loss, by Lost")
	assert.Equal(t, slog.LevelWarn, r[0].Level)
	assert.Equal(t, "redisson", r[0].Attrs["lockbridge.lock.system"])
	assert.Equal(t, "k", r[0].Attrs["lockbridge.lock.key"])
	assert.Equal(t, "i/o timeout", r[0].Attrs["error"])
	r = rec.Records("lock lost")
	require.Len(t, r, 1)
	assert.Equal(t, slog.LevelError, r[0].Level)
}

func BenchmarkAcquireOff(b *testing.B) {
	ctx := context.Background()
	f := func(context.Context, string, time.Duration) (lockbridge.Lock, error) { return nil, nil }
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		_, _ = Acquire(ctx, nil, OpLock, f, "k", time.Second)
	}
}

// The library depends on the OpenTelemetry API only: the SDK and the
// exporters are the application's (examples/otel has its own go.mod).
func TestNoSDKInTheLibrarysModule(t *testing.T) {
	mod, err := os.ReadFile("../../../go.mod")
	require.NoError(t, err)
	assert.NotContains(t, string(mod), "go.opentelemetry.io/otel/sdk")
	assert.NotContains(t, string(mod), "go.opentelemetry.io/otel/exporters")
	assert.NotContains(t, string(mod), "prometheus")
	assert.Contains(t, string(mod), "\ngo 1.21\n", "the otel API version chosen keeps Go 1.21")
}
