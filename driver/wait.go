package driver

import (
	"context"
	"errors"
	"time"
)

// ErrNoPin is what EvalWait returns when the adapter cannot send two
// commands on one connection.
var ErrNoPin = errors.New("driver: this client cannot send WAIT on the connection of a write")

// Waiter is implemented by every Client Wrap returns: EvalWait runs s as
// Eval does (keys[0] picks the node in a cluster), then, on the same
// connection, WAIT replicas timeout, and returns the script's reply and how
// many replicas acknowledged its writes (WAIT's reply). When the script
// fails, WAIT is not sent (acked is 0). When the adapter cannot pin a
// connection, the error wraps ErrNoPin and nothing is sent.
type Waiter interface {
	EvalWait(ctx context.Context, s *Script, keys []string, replicas int, timeout time.Duration, args ...any) (reply any,
		acked int64, err error)
}
