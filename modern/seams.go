package modern

import (
	"context"
	"time"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/internal/runtime/lockopt"
)

// Attempt is TryLock returning the concrete *Lock and, when another holder
// has the lock, the holder's remaining lease (0 if unknown), for callers
// that run their own waiting loop (the migrate package).
func (l *Locker) Attempt(ctx context.Context, key string, ttl time.Duration) (*Lock, time.Duration, error) {
	n, ttl, err := l.prepare(ctx, key, ttl)
	if err != nil {
		return nil, 0, err
	}
	return l.try(ctx, &n, ttl)
}

// Settings are the options a Locker was built with, for packages that speak
// the modern protocol with scripts of their own (migrate's dual phases).
type Settings struct {
	AutoRefresh   bool
	Fencing       bool
	Notifications bool
	Backoff       lockbridge.Backoff
	// WaitReplicas and WaitTimeout are WithWait's (0: off). Packages with
	// acquire scripts of their own must WAIT likewise or refuse.
	WaitReplicas int
	WaitTimeout  time.Duration
	// Token makes each acquire's token (WithTokenFunc; NewToken by default),
	// checked as the Locker checks it: a token that is empty or longer than
	// MaxTokenLen is an error wrapping lockbridge.ErrInvalid.
	Token func() (string, error)
	// Err is the Locker's invalid options, as TryLock would report them.
	Err error
}

// Settings returns the Locker's options.
func (l *Locker) Settings() Settings {
	return Settings{
		AutoRefresh:   l.cfg.autoRefresh,
		Fencing:       l.cfg.fencing,
		Notifications: l.cfg.notify,
		Backoff:       l.cfg.backoff,
		WaitReplicas:  l.cfg.waitN,
		WaitTimeout:   l.cfg.waitTimeout,
		Token:         l.checkedToken,
		Err:           l.err,
	}
}

// Manual returns a Locker like l whose locks never start the auto-refresh,
// whatever its options, for a caller that refreshes them itself (the
// migrate package, which stops refreshing once it can no longer trust its
// phase).
func (l *Locker) Manual() *Locker {
	m := *l
	m.cfg.autoRefresh = false
	return &m
}

// checkedToken is the Locker's token function with the Locker's check: one
// validation for every package that writes modern tokens.
func (l *Locker) checkedToken() (string, error) { return lockopt.Token("modern", l.cfg.token) }
