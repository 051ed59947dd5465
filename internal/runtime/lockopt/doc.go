// Package lockopt is the option layer every lock package shares: how an
// invalid option is recorded (never a panic: the Locker's calls then fail
// with an error wrapping lockbridge.ErrInvalid), WithBackoff's check, the
// token check, the zero-Locker check, and the telemetry options
// (WithTelemetry).
package lockopt
