// Package telemetry is what every lock package reports through: a
// log/slog logger for what the library does in the background, and
// OpenTelemetry metrics and spans, through the otel API only (the
// application brings the SDK). A *T built from empty Settings is off: its
// logger discards, and its methods return at once without allocating.
// docs/observability.md lists every instrument and attribute.
package telemetry
