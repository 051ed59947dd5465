package telemetry

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"

	"github.com/lockbridge/lockbridge"
)

// Scope is the instrumentation scope of the meters and tracers.
const Scope = "github.com/lockbridge/lockbridge"

// The attribute keys (docs/observability.md).
const (
	AttrSystem    = attribute.Key("lockbridge.lock.system")    // legacy, modern, migrate, redlock, redisson
	AttrOperation = attribute.Key("lockbridge.lock.operation") // try_lock, lock
	AttrOutcome   = attribute.Key("lockbridge.lock.outcome")   // see the Outcome constants
	AttrNamespace = attribute.Key("lockbridge.migrate.namespace")
	AttrClient    = attribute.Key("lockbridge.migrate.client.id")
	AttrPhase     = attribute.Key("lockbridge.migrate.phase")
	AttrFrom      = attribute.Key("lockbridge.migrate.phase.from")
	AttrReason    = attribute.Key("lockbridge.migrate.refusal.reason")
)

// The operations of AttrOperation.
const (
	OpTryLock = "try_lock"
	OpLock    = "lock"
)

// The outcomes of AttrOutcome.
const (
	OutcomeObtained    = "obtained"
	OutcomeNotObtained = "not_obtained"
	OutcomeUnknown     = "unknown"
	OutcomeInvalid     = "invalid"
	OutcomeError       = "error"
	// Refresh outcomes.
	OutcomeRefreshed = "refreshed"
	OutcomeNotHeld   = "not_held"
)

// Settings is what a Locker was given (its WithTelemetry): each nil means
// off.
type Settings = lockbridge.Telemetry

// T reports for one Locker. A nil *T is off, like one built from empty
// Settings.
type T struct {
	system string
	log    *slog.Logger
	tracer trace.Tracer // nil: no spans
	m      *instruments // nil: no metrics
	sys    attribute.KeyValue
}

type instruments struct {
	acquire    metric.Float64Histogram
	wait       metric.Float64Histogram
	contention metric.Int64Counter
	refreshes  metric.Int64Counter
	lost       metric.Int64Counter
	fence      metric.Int64Gauge
	phase      metric.Int64Gauge
	sightings  metric.Int64Counter
	steps      metric.Int64Counter
	refusals   metric.Int64Counter
}

var discard = slog.New(discardHandler{})

// New returns the telemetry of a Locker of package system. An instrument
// the meter cannot make records nothing (the error is logged), never fatal.
func New(system string, s Settings) *T {
	t := &T{system: system, log: discard, sys: AttrSystem.String(system)}
	if s.Logger != nil {
		t.log = s.Logger.With("lockbridge.lock.system", system)
	}
	if s.TracerProvider != nil {
		t.tracer = s.TracerProvider.Tracer(Scope)
	}
	if s.MeterProvider != nil {
		t.m = t.instruments(s.MeterProvider.Meter(Scope))
	}
	return t
}

func (t *T) instruments(m metric.Meter) *instruments {
	var errs []error
	sec := metric.WithExplicitBucketBoundaries(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5,
		10, 30)
	hist := func(name, desc string) metric.Float64Histogram {
		h, err := m.Float64Histogram(name, metric.WithUnit("s"), metric.WithDescription(desc), sec)
		if errs = append(errs, err); h == nil {
			return noop.Float64Histogram{}
		}
		return h
	}
	count := func(name, unit, desc string) metric.Int64Counter {
		c, err := m.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		if errs = append(errs, err); c == nil {
			return noop.Int64Counter{}
		}
		return c
	}
	gauge := func(name, unit, desc string) metric.Int64Gauge {
		g, err := m.Int64Gauge(name, metric.WithUnit(unit), metric.WithDescription(desc))
		if errs = append(errs, err); g == nil {
			return noop.Int64Gauge{}
		}
		return g
	}
	in := &instruments{
		acquire: hist("lockbridge.lock.acquire.duration", "Time a TryLock or Lock call took, by outcome."),
		wait: hist("lockbridge.lock.wait.duration",
			"Time a Lock call spent waiting between attempts while the lock was held by another."),
		contention: count("lockbridge.lock.contention", "{attempt}", "Acquire attempts that found the lock held by another."),
		refreshes: count("lockbridge.lock.refreshes", "{refresh}",
			"Background refreshes (auto-refresh, watchdog) by outcome."),
		lost: count("lockbridge.lock.lost", "{lock}",
			"Locks lost while held: found gone by a background refresher, or ended by a migrate phase move."),
		fence: gauge("lockbridge.lock.fence", "{fence}", "The last fence value handed out to this process."),
		phase: gauge("lockbridge.migrate.phase", "{phase}",
			"The migration phase a client runs: 1 legacy, 2 dual-write, 3 dual-read, 4 modern."),
		sightings: count("lockbridge.migrate.sightings", "{sighting}",
			"Legacy holders met by a migrating client and recorded in the registry."),
		steps: count("lockbridge.migrate.controller.steps", "{step}", "Phase changes the controller made."),
		refusals: count("lockbridge.migrate.controller.refusals", "{refusal}",
			"Phase changes the controller refused as unsafe."),
	}
	if err := errors.Join(errs...); err != nil {
		t.log.Error("lockbridge: making instruments", "error", err)
	}
	return in
}

// Discard is a logger that discards every record.
func Discard() *slog.Logger { return discard }

// Log is the logger: never nil (it discards when none was given).
func (t *T) Log() *slog.Logger {
	if t == nil {
		return discard
	}
	return t.log
}

// Op is one acquire in flight, from Begin to End.
type Op struct {
	name  string
	start time.Time
	span  trace.Span // nil: no span
}

// Begin starts an acquire (OpTryLock or OpLock) on key: a span when a
// tracer was given, and the clock of its duration when a meter was.
func (t *T) Begin(ctx context.Context, op, key string) (context.Context, Op) {
	if t == nil || (t.m == nil && t.tracer == nil) {
		return ctx, Op{}
	}
	o := Op{name: op, start: time.Now()}
	if t.tracer != nil {
		ctx, o.span = t.tracer.Start(ctx, "lockbridge."+t.system+"."+op, trace.WithSpanKind(trace.SpanKindClient),
			trace.WithAttributes(t.sys, AttrOperation.String(op), attribute.String("lockbridge.lock.key", key)))
	}
	return ctx, o
}

// fenced is a lock with a fence (every lock package's Lock).
type fenced interface{ Fence() int64 }

// AcquireFunc is a TryLock or Lock.
type AcquireFunc func(ctx context.Context, key string, ttl time.Duration) (lockbridge.Lock, error)

// Acquire calls f, the TryLock or Lock (op) of a Locker, between Begin and
// End: every lock package's TryLock and Lock go through it.
func Acquire(ctx context.Context, t *T, op string, f AcquireFunc, key string,
	ttl time.Duration) (lockbridge.Lock, error) {
	ctx, o := t.Begin(ctx, op, key)
	lk, err := f(ctx, key, ttl)
	t.End(ctx, o, lk, err)
	return lk, err
}

// End records how the acquire begun by o ended: its duration and outcome,
// the fence of the lock obtained, and ends the span.
func (t *T) End(ctx context.Context, o Op, lk lockbridge.Lock, err error) {
	if o.name == "" {
		return
	}
	outcome := Outcome(err)
	var fence int64
	if f, ok := lk.(fenced); ok && err == nil {
		fence = f.Fence()
	}
	if t.m != nil {
		attrs := metric.WithAttributes(t.sys, AttrOperation.String(o.name), AttrOutcome.String(outcome))
		t.m.acquire.Record(ctx, time.Since(o.start).Seconds(), attrs)
		if o.name == OpTryLock && outcome == OutcomeNotObtained {
			t.m.contention.Add(ctx, 1, metric.WithAttributes(t.sys))
		}
		if fence != 0 {
			t.m.fence.Record(ctx, fence, metric.WithAttributes(t.sys))
		}
	}
	if o.span != nil {
		o.span.SetAttributes(AttrOutcome.String(outcome))
		if fence != 0 {
			o.span.SetAttributes(attribute.Int64("lockbridge.lock.fence", fence))
		}
		if err != nil && outcome != OutcomeNotObtained {
			o.span.RecordError(err)
		}
		o.span.End()
	}
}

// Outcome names err's outcome for AttrOutcome.
func Outcome(err error) string {
	switch {
	case err == nil:
		return OutcomeObtained
	case errors.Is(err, lockbridge.ErrUnknownOutcome):
		return OutcomeUnknown
	case errors.Is(err, lockbridge.ErrNotObtained):
		return OutcomeNotObtained
	case errors.Is(err, lockbridge.ErrInvalid):
		return OutcomeInvalid
	}
	return OutcomeError
}

// Contended counts an attempt of Lock that found the lock held.
func (t *T) Contended(ctx context.Context) {
	if t == nil || t.m == nil {
		return
	}
	t.m.contention.Add(ctx, 1, metric.WithAttributes(t.sys))
}

// Waited records the time a Lock call spent waiting between attempts.
func (t *T) Waited(ctx context.Context, d time.Duration) {
	if t == nil || t.m == nil || d <= 0 {
		return
	}
	t.m.wait.Record(ctx, d.Seconds(), metric.WithAttributes(t.sys))
}

// Refreshed records a background refresh of key and its outcome
// (OutcomeRefreshed, OutcomeNotHeld, OutcomeError). A failed one
// (OutcomeError, retried) is logged at warn level; a not-held one is
// logged by Lost, as the loss it is.
func (t *T) Refreshed(ctx context.Context, key, outcome string, err error) {
	if t == nil {
		return
	}
	if outcome == OutcomeError {
		t.log.WarnContext(ctx, "lockbridge: background refresh failed; retrying", "lockbridge.lock.key", key, "error", err)
	}
	if t.m != nil {
		t.m.refreshes.Add(ctx, 1, metric.WithAttributes(t.sys, AttrOutcome.String(outcome)))
	}
}

// Lost records the loss of a held lock, logged at error level.
func (t *T) Lost(ctx context.Context, key string, err error) {
	if t == nil {
		return
	}
	t.log.ErrorContext(ctx, "lockbridge: lock lost", "lockbridge.lock.key", key, "error", err)
	if t.m != nil {
		t.m.lost.Add(ctx, 1, metric.WithAttributes(t.sys))
	}
}

// Phase records the phase a migrating client runs now.
func (t *T) Phase(ctx context.Context, ns, client string, p int64, name string) {
	if t == nil || t.m == nil {
		return
	}
	t.m.phase.Record(ctx, p, metric.WithAttributes(AttrNamespace.String(ns), AttrClient.String(client),
		AttrPhase.String(name)))
}

// Sighted counts a legacy holder recorded in namespace ns.
func (t *T) Sighted(ctx context.Context, ns string) {
	if t == nil || t.m == nil {
		return
	}
	t.m.sightings.Add(ctx, 1, metric.WithAttributes(AttrNamespace.String(ns)))
}

// Stepped counts a phase change the controller made in ns, from one
// phase to another.
func (t *T) Stepped(ctx context.Context, ns, from, to string) {
	if t == nil || t.m == nil {
		return
	}
	t.m.steps.Add(ctx, 1, metric.WithAttributes(AttrNamespace.String(ns), AttrFrom.String(from), AttrPhase.String(to)))
}

// Refused counts a phase change the controller refused in ns, and why.
func (t *T) Refused(ctx context.Context, ns, to, reason string) {
	if t == nil || t.m == nil {
		return
	}
	t.m.refusals.Add(ctx, 1, metric.WithAttributes(AttrNamespace.String(ns), AttrPhase.String(to),
		AttrReason.String(reason)))
}

// discardHandler drops every record (slog.DiscardHandler is Go 1.24).
type discardHandler struct{}

func (discardHandler) Enabled(context.Context, slog.Level) bool  { return false }
func (discardHandler) Handle(context.Context, slog.Record) error { return nil }
func (d discardHandler) WithAttrs([]slog.Attr) slog.Handler      { return d }
func (d discardHandler) WithGroup(string) slog.Handler           { return d }
