package main

import (
	"context"
	"log/slog"
	"os"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	goredislib "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/lockbridge/lockbridge/driver/goredis"
	"github.com/lockbridge/lockbridge/internal/testing/redistest"
)

// One lock cycle and one migration cycle on a real redis-server, the
// metrics read back from the Prometheus exporter and the spans from the
// SDK: every instrument of docs/observability.md that the cycles touch.
func TestMetricsReadBack(t *testing.T) {
	srv := redistest.Start(t)
	rc := goredislib.NewClient(&goredislib.Options{Addr: srv.Addr(), MaxRetries: -1})
	t.Cleanup(func() { _ = rc.Close() })
	c := goredis.New(rc)
	ctx := context.Background()
	spans := tracetest.NewSpanRecorder()
	tel, err := NewTelemetry(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})), spans)
	require.NoError(t, err)
	defer tel.Shutdown(ctx)

	require.NoError(t, LockCycle(ctx, c, tel, "example:orders", 250*time.Millisecond))
	require.NoError(t, MigrateCycle(ctx, c, tel, "example", "payments"))

	// The loss is counted just after the lost lock's Done closes (nothing
	// may hold Done up), so gather until it is there.
	m := map[string]*dto.MetricFamily{}
	require.Eventually(t, func() bool {
		fams, err := tel.Registry.Gather()
		require.NoError(t, err)
		for _, f := range fams {
			m[f.GetName()] = f
		}
		return m["lockbridge_lock_lost_total"] != nil
	}, 5*time.Second, 10*time.Millisecond)
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	t.Logf("metric families: %v", names)

	acq := m["lockbridge_lock_acquire_duration_seconds"]
	require.NotNil(t, acq, "families: %v", names)
	require.Equal(t, dto.MetricType_HISTOGRAM, acq.GetType())
	count := func(f *dto.MetricFamily, labels map[string]string) (n uint64, sum float64) {
		for _, mt := range f.GetMetric() {
			if match(mt, labels) {
				n += mt.GetHistogram().GetSampleCount()
				sum += mt.GetHistogram().GetSampleSum()
			}
		}
		return n, sum
	}
	n, _ := count(acq, map[string]string{"lockbridge_lock_system": "modern", "lockbridge_lock_operation": "try_lock",
		"lockbridge_lock_outcome": "obtained"})
	assert.Equal(t, uint64(1), n)
	n, _ = count(acq, map[string]string{"lockbridge_lock_system": "modern", "lockbridge_lock_operation": "try_lock",
		"lockbridge_lock_outcome": "not_obtained"})
	assert.Equal(t, uint64(1), n)
	n, sum := count(acq, map[string]string{"lockbridge_lock_system": "modern", "lockbridge_lock_operation": "lock",
		"lockbridge_lock_outcome": "obtained"})
	assert.Equal(t, uint64(1), n)
	assert.Greater(t, sum, 0.1, "the Lock waited for the release, after 250 ms")
	n, _ = count(acq, map[string]string{"lockbridge_lock_system": "migrate", "lockbridge_lock_operation": "try_lock",
		"lockbridge_lock_outcome": "not_obtained"})
	assert.Equal(t, uint64(1), n, "the migrating client beside the legacy holder")

	wait := m["lockbridge_lock_wait_duration_seconds"]
	require.NotNil(t, wait)
	n, sum = count(wait, map[string]string{"lockbridge_lock_system": "modern"})
	assert.Equal(t, uint64(1), n, "one Lock waited")
	assert.Greater(t, sum, 0.0)

	assert.GreaterOrEqual(t, counter(m["lockbridge_lock_contention_total"],
		map[string]string{"lockbridge_lock_system": "modern"}), 2.0,
		"the second TryLock, and the Lock's first attempt")
	assert.GreaterOrEqual(t, counter(m["lockbridge_lock_refreshes_total"],
		map[string]string{"lockbridge_lock_outcome": "refreshed"}), 1.0,
		"the auto-refresh ran while the first lock was held")
	assert.Equal(t, 1.0, counter(m["lockbridge_lock_lost_total"], map[string]string{"lockbridge_lock_system": "modern"}))
	assert.GreaterOrEqual(t, counter(m["lockbridge_lock_refreshes_total"],
		map[string]string{"lockbridge_lock_outcome": "not_held"}), 1.0)
	fence := gauge(t, m["lockbridge_lock_fence"], map[string]string{"lockbridge_lock_system": "modern"})
	assert.Greater(t, fence, 1.0e15, "a fence: max(counter+1, the server's TIME in µs)")

	assert.Equal(t, 2.0, gauge(t, m["lockbridge_migrate_phase"],
		map[string]string{"lockbridge_migrate_namespace": "example", "lockbridge_migrate_phase": "dual-write"}),
		"the client runs dual-write")
	assert.Equal(t, 1.0, counter(m["lockbridge_migrate_controller_steps_total"],
		map[string]string{"lockbridge_migrate_phase_from": "legacy", "lockbridge_migrate_phase": "dual-write"}))
	assert.Equal(t, 1.0, counter(m["lockbridge_migrate_controller_refusals_total"],
		map[string]string{"lockbridge_migrate_phase": "dual-read", "lockbridge_migrate_refusal_reason": "quiet-period"}))
	assert.Equal(t, 1.0, counter(m["lockbridge_migrate_sightings_total"],
		map[string]string{"lockbridge_migrate_namespace": "example"}))

	var spanNames []string
	for _, s := range spans.Ended() {
		spanNames = append(spanNames, s.Name())
	}
	assert.Subset(t, spanNames, []string{"lockbridge.modern.try_lock", "lockbridge.modern.lock",
		"lockbridge.migrate.try_lock"})
}

func match(mt *dto.Metric, labels map[string]string) bool {
	have := map[string]string{}
	for _, l := range mt.GetLabel() {
		have[l.GetName()] = l.GetValue()
	}
	for k, v := range labels {
		if have[k] != v {
			return false
		}
	}
	return true
}

func counter(f *dto.MetricFamily, labels map[string]string) float64 {
	var v float64
	for _, mt := range f.GetMetric() {
		if match(mt, labels) {
			v += mt.GetCounter().GetValue()
		}
	}
	return v
}

func gauge(t *testing.T, f *dto.MetricFamily, labels map[string]string) float64 {
	t.Helper()
	require.NotNil(t, f)
	for _, mt := range f.GetMetric() {
		if match(mt, labels) {
			return mt.GetGauge().GetValue()
		}
	}
	t.Fatalf("no %s with %v", f.GetName(), labels)
	return 0
}
