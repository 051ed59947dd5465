package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/migrate"
	"github.com/lockbridge/lockbridge/migrate/control"
	"github.com/lockbridge/lockbridge/modern"
)

// Telemetry is the SDK's side: a meter provider exporting to a Prometheus
// registry, and a tracer provider.
type Telemetry struct {
	Registry *prometheus.Registry
	Meters   *sdkmetric.MeterProvider
	Tracers  *sdktrace.TracerProvider
	Logger   *slog.Logger
}

// NewTelemetry wires the SDK: metrics to a Prometheus registry of their
// own, spans to the exporters in spans (none: spans are made and dropped).
func NewTelemetry(log *slog.Logger, spans ...sdktrace.SpanProcessor) (*Telemetry, error) {
	reg := prometheus.NewRegistry()
	exp, err := otelprom.New(otelprom.WithRegisterer(reg))
	if err != nil {
		return nil, fmt.Errorf("prometheus exporter: %w", err)
	}
	opts := make([]sdktrace.TracerProviderOption, 0, len(spans))
	for _, s := range spans {
		opts = append(opts, sdktrace.WithSpanProcessor(s))
	}
	return &Telemetry{
		Registry: reg,
		Meters:   sdkmetric.NewMeterProvider(sdkmetric.WithReader(exp)),
		Tracers:  sdktrace.NewTracerProvider(opts...),
		Logger:   log,
	}, nil
}

// Lockbridge is what every lockbridge package's WithTelemetry takes.
func (t *Telemetry) Lockbridge() lockbridge.Telemetry {
	return lockbridge.Telemetry{Logger: t.Logger, MeterProvider: t.Meters, TracerProvider: t.Tracers}
}

// Shutdown flushes and stops both providers.
func (t *Telemetry) Shutdown(ctx context.Context) error {
	return errors.Join(t.Meters.Shutdown(ctx), t.Tracers.Shutdown(ctx))
}

// LockCycle runs one modern lock's life on c, every step reported: a
// fenced, auto-refreshed lock is taken; a second TryLock finds it held;
// a Lock waits until the first is released (after hold, long enough for
// the auto-refresh to run); then the lock Lock got is deleted behind its
// back and the auto-refresh reports it lost.
func LockCycle(ctx context.Context, c driver.Client, t *Telemetry, key string, hold time.Duration) error {
	l := modern.New(c, modern.WithFencing(), modern.WithAutoRefresh(),
		modern.WithTelemetry(t.Lockbridge()))
	first, err := l.TryLock(ctx, key, 300*time.Millisecond)
	if err != nil {
		return fmt.Errorf("first TryLock: %w", err)
	}
	if _, err := l.TryLock(ctx, key, 300*time.Millisecond); !errors.Is(err, lockbridge.ErrNotObtained) {
		return fmt.Errorf("second TryLock: want not obtained, got %v", err)
	}
	released := make(chan error, 1)
	go func() {
		time.Sleep(hold)
		released <- first.Unlock(ctx)
	}()
	second, err := l.Lock(ctx, key, 300*time.Millisecond)
	if err := <-released; err != nil {
		return fmt.Errorf("unlock: %w", err)
	}
	if err != nil {
		return fmt.Errorf("the waiting Lock: %w", err)
	}
	if _, err := c.Do(ctx, "DEL", key); err != nil { // lost behind its back
		return err
	}
	select {
	case <-second.Done():
	case <-time.After(5 * time.Second):
		return errors.New("the deleted lock was not reported lost")
	}
	if !errors.Is(second.Err(), lockbridge.ErrLost) {
		return fmt.Errorf("want lost, got %v", second.Err())
	}
	return nil
}

// MigrateCycle starts namespace ns at legacy, runs a migrating client
// that follows it (its phase a gauge), steps the fleet to dual-write
// (counted), waits for the client to follow, and tries the next step at
// once, which the quiet period refuses (counted). The client then meets a
// legacy-only holder on key (a sighting, counted).
func MigrateCycle(ctx context.Context, c driver.Client, t *Telemetry, ns, key string) error {
	// Init waits until the namespace has shown no trace for the init
	// silence: here this program's own fleet, a phase lease of 150 ms and
	// leases of a second (a real fleet keeps the default, 2 minutes).
	ctl, err := control.New(c, ns, control.WithTelemetry(t.Lockbridge()),
		control.WithInitSilence(1500*time.Millisecond))
	if err != nil {
		return err
	}
	if _, err := ctl.Init(ctx, false); err != nil {
		return err
	}
	l := migrate.New(c, migrate.WithPhaseFrom(ns), migrate.WithPhaseInterval(50*time.Millisecond),
		migrate.WithTelemetry(t.Lockbridge()))
	defer l.Close(ctx)
	if _, err := l.Phase(ctx); err != nil {
		return err
	}
	if _, err := ctl.Advance(ctx, false); err != nil {
		return err
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		p, err := l.Phase(ctx)
		if err != nil {
			return err
		}
		if p == migrate.PhaseDualWrite {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the client still runs %v", p)
		}
	}
	if _, err := ctl.Advance(ctx, false); !errors.Is(err, control.ErrUnsafeStep) {
		return fmt.Errorf("the step to dual-read: want refused, got %v", err)
	}
	// A Java service's lock: SETNX key <expiry millis>, no modern key.
	legacyKey, _, err := l.Keys(key)
	if err != nil {
		return err
	}
	expiry := time.Now().Add(time.Minute).UnixMilli() + 1
	if _, err := c.Do(ctx, "SET", legacyKey, fmt.Sprint(expiry)); err != nil {
		return err
	}
	if _, err := l.TryLock(ctx, key, time.Second); !errors.Is(err, lockbridge.ErrNotObtained) {
		return fmt.Errorf("TryLock beside a legacy holder: want not obtained, got %v", err)
	}
	return nil
}
