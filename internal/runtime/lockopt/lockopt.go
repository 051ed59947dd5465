package lockopt

import (
	"errors"
	"fmt"
	"time"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/internal/runtime/telemetry"
)

// Errs records what is wrong with a package's options. Every error it
// records names the package and wraps lockbridge.ErrInvalid (or the error
// a check returned, which wraps it).
// It also carries the telemetry options every package shares
// (WithTelemetry), since every
// package's config holds one.
type Errs struct {
	pkg  string
	errs []error
	tel  telemetry.Settings
}

// For returns the Errs of package pkg.
func For(pkg string) Errs { return Errs{pkg: pkg} }

// Invalid records an invalid option, described by format and args.
func (e *Errs) Invalid(format string, args ...any) {
	e.errs = append(e.errs, fmt.Errorf("%s: %w: %s", e.pkg, lockbridge.ErrInvalid, fmt.Sprintf(format, args...)))
}

// Add records err, which already wraps lockbridge.ErrInvalid.
func (e *Errs) Add(err error) { e.errs = append(e.errs, fmt.Errorf("%s: %w", e.pkg, err)) }

// Pkg is the package the options belong to.
func (e *Errs) Pkg() string { return e.pkg }

// Err joins what was recorded; nil when every option was valid.
func (e *Errs) Err() error { return errors.Join(e.errs...) }

// Apply runs opts on cfg, recording a nil option as invalid.
func Apply[C any, O ~func(*C)](e *Errs, cfg *C, opts []O) {
	for _, o := range opts {
		if o == nil {
			e.Invalid("nil option")
			continue
		}
		o(cfg)
	}
}

// Backoff is WithBackoff: it stores b in dst, or records why b is invalid.
func (e *Errs) Backoff(dst *lockbridge.Backoff, b lockbridge.Backoff) {
	if err := checkBackoff(b); err != nil {
		e.Add(err)
		return
	}
	*dst = b
}

// Pollers is WithPollers: it stores d in dst, or records a negative d.
func (e *Errs) Pollers(dst *time.Duration, d time.Duration) {
	if d < 0 {
		e.Invalid("pollers' interval %v is negative", d)
		return
	}
	*dst = d
}

// TokenFunc is WithTokenFunc: it stores f in dst, or records a nil f.
func (e *Errs) TokenFunc(dst *func() (string, error), f func() (string, error)) {
	if f == nil {
		e.Invalid("nil token func")
		return
	}
	*dst = f
}

// Zero is the error of a call on a Locker not made by New (nil, or its
// zero value): it wraps lockbridge.ErrInvalid.
func Zero(pkg string) error {
	return fmt.Errorf("%s: %w: nil or zero *Locker (use New)", pkg, lockbridge.ErrInvalid)
}

// Keep records err as it is: an error of another package's options (a
// legacy or modern option given to migrate), already named and wrapped.
func (e *Errs) Keep(err error) { e.errs = append(e.errs, err) }

// Telemetry is WithTelemetry: t is where the Locker reports; its zero
// value (the default) reports nothing.
func (e *Errs) Telemetry(t lockbridge.Telemetry) { e.tel = t }

// Settings are the telemetry options given.
func (e *Errs) Settings() telemetry.Settings { return e.tel }

// Reporter builds the telemetry of the package's Locker from the options.
func (e *Errs) Reporter() *telemetry.T { return telemetry.New(e.pkg, e.tel) }

// checkBackoff reports an error wrapping lockbridge.ErrInvalid when b is nil
// or one of lockbridge's backoffs built with out-of-range arguments (they
// have a Validate method).
func checkBackoff(b lockbridge.Backoff) error {
	if b == nil {
		return fmt.Errorf("%w: nil backoff", lockbridge.ErrInvalid)
	}
	if v, ok := b.(interface{ Validate() error }); ok {
		return v.Validate()
	}
	return nil
}
