package lockbridge_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	goredislib "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/driver/goredis"
	"github.com/lockbridge/lockbridge/legacy"
	"github.com/lockbridge/lockbridge/migrate"
	"github.com/lockbridge/lockbridge/migrate/control"
	"github.com/lockbridge/lockbridge/modern"
	"github.com/lockbridge/lockbridge/redisson"
	"github.com/lockbridge/lockbridge/redlock"
)

// countingMeters counts the meters a locker asks for.
type countingMeters struct {
	metricnoop.MeterProvider
	n *atomic.Int64
}

func (p countingMeters) Meter(name string, opts ...metric.MeterOption) metric.Meter {
	p.n.Add(1)
	return p.MeterProvider.Meter(name, opts...)
}

// countingTracers counts the spans a locker starts.
type countingTracers struct {
	tracenoop.TracerProvider
	spans *atomic.Int64
}

func (p countingTracers) Tracer(name string, opts ...trace.TracerOption) trace.Tracer {
	return countingTracer{Tracer: p.TracerProvider.Tracer(name, opts...), spans: p.spans}
}

type countingTracer struct {
	trace.Tracer
	spans *atomic.Int64
}

func (t countingTracer) Start(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context,
	trace.Span) {
	t.spans.Add(1)
	return t.Tracer.Start(ctx, name, opts...)
}

func miniClient(t *testing.T) driver.Client {
	t.Helper()
	mr := miniredis.RunT(t)
	rdb := goredislib.NewClient(&goredislib.Options{Addr: mr.Addr(), MaxRetries: -1})
	t.Cleanup(func() { rdb.Close() })
	return goredis.New(rdb)
}

// Every locker takes WithTelemetry
// (docs/observability.md) and uses what it is given: a meter at New, a span
// per TryLock; and the controller takes control.WithTelemetry.
func TestEveryLockerTakesTheTelemetryOptions(t *testing.T) {
	ctx := context.Background()
	type locker struct {
		name string
		mk   func(c driver.Client, mp metric.MeterProvider, tp trace.TracerProvider) lockbridge.Locker
	}
	for _, l := range []locker{
		{"legacy", func(c driver.Client, mp metric.MeterProvider, tp trace.TracerProvider) lockbridge.Locker {
			return legacy.New(c, legacy.WithTelemetry(lockbridge.Telemetry{MeterProvider: mp, TracerProvider: tp}))
		}},
		{"modern", func(c driver.Client, mp metric.MeterProvider, tp trace.TracerProvider) lockbridge.Locker {
			return modern.New(c, modern.WithTelemetry(lockbridge.Telemetry{MeterProvider: mp, TracerProvider: tp}))
		}},
		{"migrate", func(c driver.Client, mp metric.MeterProvider, tp trace.TracerProvider) lockbridge.Locker {
			return migrate.New(c, migrate.WithPhase(migrate.PhaseLegacy),
				migrate.WithTelemetry(lockbridge.Telemetry{MeterProvider: mp, TracerProvider: tp}))
		}},
		{"redisson", func(c driver.Client, mp metric.MeterProvider, tp trace.TracerProvider) lockbridge.Locker {
			return redisson.New(c, redisson.WithTelemetry(lockbridge.Telemetry{MeterProvider: mp, TracerProvider: tp}))
		}},
		{"redlock", func(c driver.Client, mp metric.MeterProvider, tp trace.TracerProvider) lockbridge.Locker {
			return redlock.New([]driver.Client{c, miniClient(t), miniClient(t)},
				redlock.WithTelemetry(lockbridge.Telemetry{MeterProvider: mp, TracerProvider: tp}))
		}},
	} {
		t.Run(l.name, func(t *testing.T) {
			var meters, spans atomic.Int64
			lk := l.mk(miniClient(t), countingMeters{n: &meters}, countingTracers{spans: &spans})
			if c, ok := lk.(interface{ Close(context.Context) error }); ok {
				defer c.Close(ctx)
			}
			assert.Positive(t, meters.Load(), "no meter asked for")
			lock, err := lk.TryLock(ctx, "telemetry:1", 10*time.Second)
			require.NoError(t, err)
			require.NoError(t, lock.Unlock(ctx))
			assert.Positive(t, spans.Load(), "no span for TryLock")
		})
	}
	t.Run("controller", func(t *testing.T) {
		var meters atomic.Int64
		_, err := control.New(miniClient(t), "telemetry",
			control.WithTelemetry(lockbridge.Telemetry{MeterProvider: countingMeters{n: &meters}}))
		require.NoError(t, err)
		assert.Positive(t, meters.Load(), "no meter asked for")
	})
}
