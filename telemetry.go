package lockbridge

import (
	"log/slog"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// Telemetry is where a locker or a migration controller reports what it
// does; every package takes it through its WithTelemetry option. The zero
// value reports nothing: each nil field is off, and a nil provider is not
// the global otel one (pass otel.GetMeterProvider() or
// otel.GetTracerProvider() for those). docs/observability.md lists the log
// records, the instruments and the spans.
type Telemetry struct {
	// Logger receives what happens in the background: refreshes that
	// failed, locks lost, phases followed. The controller logs the steps
	// it takes and refuses.
	Logger *slog.Logger
	// MeterProvider makes the instruments: acquire and wait durations,
	// contention, refreshes, losses, fences, phases, controller steps.
	MeterProvider metric.MeterProvider
	// TracerProvider makes one span per TryLock and Lock. The controller
	// makes none.
	TracerProvider trace.TracerProvider
}
