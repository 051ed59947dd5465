package legacyproto

import (
	"strconv"
	"time"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/internal/runtime/lockopt"
)

// pkg names the public package in errors: users meet this protocol as
// legacy's.
const pkg = "legacy"

// Mode is how a legacy Locker talks to Redis: one script per operation, or
// the Java scheme's literal commands.
type Mode int

// The modes (documented as legacy.ModeAtomic and legacy.ModeClassic).
const (
	ModeAtomic Mode = iota
	ModeClassic
)

// String returns "atomic" or "classic".
func (m Mode) String() string {
	switch m {
	case ModeAtomic:
		return "atomic"
	case ModeClassic:
		return "classic"
	}
	return "Mode(" + strconv.Itoa(int(m)) + ")"
}

// Valid reports whether m is a known mode.
func (m Mode) Valid() bool { return m == ModeAtomic || m == ModeClassic }

// Config is what the legacy package's options set: the profile, and the
// Locker's own settings.
type Config struct {
	Profile Profile
	Mode    Mode
	Safety  time.Duration // WithSafetyTTL; 0 off
	Backoff lockbridge.Backoff
	Poll    time.Duration // WithPollers; 0 off
	Errs    lockopt.Errs
}

// Option is an option of the legacy package (legacy.Option).
type Option func(*Config)

// WithMode sets the mode: legacy.WithClassic's option, and the tests' way
// to run a case in both modes.
func WithMode(m Mode) Option {
	return func(c *Config) {
		if !m.Valid() {
			c.Errs.Invalid("unknown mode %v", m)
			return
		}
		c.Mode = m
	}
}

// DefaultBackoff polls no slower than the Java seed's 100 ms.
func DefaultBackoff() lockbridge.Backoff {
	return lockbridge.ExponentialBackoff(10*time.Millisecond, 100*time.Millisecond)
}

// NewConfig applies opts over the defaults, recording invalid ones.
func NewConfig(opts []Option) Config {
	c := Config{Errs: lockopt.For(pkg), Backoff: DefaultBackoff()}
	lockopt.Apply(&c.Errs, &c, opts)
	return c
}

// NewProfile returns the profile opts describe (the other settings are
// checked and dropped), or their error.
func NewProfile(opts ...Option) (Profile, error) {
	c := NewConfig(opts)
	return c.Profile, c.Errs.Err()
}
