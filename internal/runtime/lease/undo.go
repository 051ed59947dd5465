package lease

import (
	"context"
	"time"
)

// UndoTimeout bounds the best-effort release of an acquire that may have
// landed after the caller gave up on it (its context ended with the command
// on the wire, or the replicas did not acknowledge it).
const UndoTimeout = 250 * time.Millisecond

// UndoContext is the context of such a release: detached from ctx, whose
// end is why the acquire is undone, keeping its values, and bounded by
// UndoTimeout.
func UndoContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), UndoTimeout)
}
