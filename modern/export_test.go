package modern

import (
	"context"

	"github.com/lockbridge/lockbridge/internal/protocol/modernproto"
)

// DefaultNotifyLinger is WithNotifyLinger's default.
const DefaultNotifyLinger = modernproto.DefaultNotifyLinger

// Test hooks: what the external tests may see of a Locker's notification hub.

// HubSubscribed reports whether l's hub has a confirmed subscription to the
// release channel of key.
func HubSubscribed(l *Locker, key string) bool {
	n, _, err := l.prepare(context.Background(), key, 1e6)
	return err == nil && n.Channel != "" && l.hub.Subscribed(n.Channel)
}

// HubOpen reports whether l's hub has a subscription open.
func HubOpen(l *Locker) bool { return l.hub.Open() }

// Waiting returns how many Lock calls of l are in line for key.
func Waiting(l *Locker, key string) int { return l.waiters.Len(key) }

// WaitingKeys returns how many keys l has Lock calls in line for.
func WaitingKeys(l *Locker) int { return l.waiters.Lines() }

// HubWaiters returns how many registrations l's hub has on the release
// channel of key (a line of Lock calls keeps one).
func HubWaiters(l *Locker, key string) int {
	n, _, err := l.prepare(context.Background(), key, 1e6)
	if err != nil || n.Channel == "" {
		return 0
	}
	return l.hub.Waiters(n.Channel)
}
