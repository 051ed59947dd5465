package modernproto

import (
	"fmt"
	"time"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/internal/runtime/lockopt"
)

// DefaultBackoffMin and DefaultBackoffMax bound modern's default backoff
// (documented as modern.DefaultBackoffMin and modern.DefaultBackoffMax).
const (
	DefaultBackoffMin = 8 * time.Millisecond
	DefaultBackoffMax = 512 * time.Millisecond
)

// DefaultNotifyLinger is how long a Locker keeps a release channel
// subscribed after its last waiter left (modern.DefaultNotifyLinger).
const DefaultNotifyLinger = time.Second

// Config is what the modern package's options set. Packages that speak the
// modern protocol with scripts of their own (migrate's dual phases) read
// the same options through NewConfig.
type Config struct {
	AutoRefresh bool
	Fencing     bool
	Notify      bool
	Linger      time.Duration // WithNotifyLinger; 0 off
	WaitN       int           // WithWait: replicas; 0 off
	WaitTimeout time.Duration // WithWait: WAIT's timeout
	Backoff     lockbridge.Backoff
	Poll        time.Duration // WithPollers; 0 off
	TokenFunc   func() (string, error)
	Errs        lockopt.Errs
}

// Option is an option of the modern package (modern.Option).
type Option func(*Config)

// NewConfig applies opts over the defaults, recording invalid ones.
func NewConfig(opts []Option) Config {
	c := Config{
		Errs:      lockopt.For("modern"),
		Notify:    true,
		Linger:    DefaultNotifyLinger,
		Backoff:   lockbridge.ExponentialBackoff(DefaultBackoffMin, DefaultBackoffMax),
		TokenFunc: NewToken,
	}
	lockopt.Apply(&c.Errs, &c, opts)
	return c
}

// Manual is an option for a caller that refreshes modern locks itself (the
// migrate package, which stops refreshing once it cannot trust its phase):
// the locks never start the auto-refresh, whatever the other options.
func Manual(c *Config) { c.AutoRefresh = false }

// Token makes an acquire's token with the configured function and checks
// it: 1 to MaxTokenLen bytes, else an error wrapping lockbridge.ErrInvalid.
// The one token check of every package that writes modern tokens.
func (c *Config) Token() (string, error) { return MakeToken(c.Errs.Pkg(), c.TokenFunc) }

// MakeToken calls f and checks what it made, for package pkg.
func MakeToken(pkg string, f func() (string, error)) (string, error) {
	tok, err := f()
	if err != nil {
		return "", fmt.Errorf("%s: token: %w", pkg, err)
	}
	if tok == "" || len(tok) > MaxTokenLen {
		return "", fmt.Errorf("%s: %w: token of %d bytes (want 1 to %d)", pkg, lockbridge.ErrInvalid, len(tok), MaxTokenLen)
	}
	return tok, nil
}
