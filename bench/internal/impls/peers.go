package impls

import (
	"context"
	"errors"
	"time"

	"github.com/bsm/redislock"
	"github.com/go-redsync/redsync/v4"
	redsyncgoredis "github.com/go-redsync/redsync/v4/redis/goredis/v9"
)

// bsmPoll is the poll interval of bsm/redislock's documented retry example
// (ExampleClient_Obtain_retry: LinearBackoff(100ms)).
const bsmPoll = 100 * time.Millisecond

// BSM is github.com/bsm/redislock: acquire is one EVALSHA (SET NX PX inside a
// script), release one EVALSHA. It waits by polling with a RetryStrategy.
var BSM = Impl{
	ID:   "bsm",
	Name: "bsm/redislock",
	Waits: map[Wait]string{
		Recommended: "LinearBackoff(100ms), as in its retry example",
		Tight:       "LinearBackoff(1ms)",
	},
	New: func(t Target, w Wait) (Locker, error) {
		poll := bsmPoll
		if w == Tight {
			poll = TightPoll
		}
		return &bsm{c: redislock.New(t.GoRedis), retry: redislock.LinearBackoff(poll)}, nil
	},
}

type bsm struct {
	c     *redislock.Client
	retry redislock.RetryStrategy // LinearBackoff is stateless: shared safely
}

func (b *bsm) TryLock(ctx context.Context, key string, ttl time.Duration) (Held, error) {
	l, err := b.c.Obtain(ctx, key, ttl, nil)
	if errors.Is(err, redislock.ErrNotObtained) {
		return nil, ErrBusy
	}
	if err != nil {
		return nil, err
	}
	return bsmHeld{l}, nil
}

func (b *bsm) Lock(ctx context.Context, key string, ttl time.Duration) (Held, error) {
	l, err := b.c.Obtain(ctx, key, ttl, &redislock.Options{RetryStrategy: b.retry})
	if err != nil {
		return nil, err
	}
	return bsmHeld{l}, nil
}

type bsmHeld struct{ l *redislock.Lock }

func (h bsmHeld) Unlock(ctx context.Context) error { return h.l.Release(ctx) }

// Redsync is github.com/go-redsync/redsync/v4 with one pool (a single Redis
// node): acquire is SET NX PX, release one EVALSHA, each sent from a new
// goroutine per pool. Its waiting is a fixed number of tries (default 32)
// with a random 50–250 ms delay.
var Redsync = Impl{
	ID:   "redsync",
	Name: "redsync (1 pool)",
	Waits: map[Wait]string{
		Recommended: "defaults: 32 tries, random 50–250 ms delay",
		Tight:       "WithRetryDelay(1ms), WithTries(1<<30)",
	},
	New: func(t Target, w Wait) (Locker, error) {
		r := &rsync{rs: redsync.New(redsyncgoredis.NewPool(t.GoRedis))}
		if w == Tight {
			r.wait = []redsync.Option{redsync.WithRetryDelay(TightPoll), redsync.WithTries(1 << 30)}
		}
		return r, nil
	},
}

type rsync struct {
	rs   *redsync.Redsync
	wait []redsync.Option
}

// A redsync Mutex holds its value and is not safe for concurrent use, so
// each acquire makes a new one, as a caller locking dynamic names does.
func (r *rsync) mutex(key string, ttl time.Duration, extra []redsync.Option) *redsync.Mutex {
	opts := make([]redsync.Option, 0, 1+len(extra))
	opts = append(opts, redsync.WithExpiry(ttl))
	return r.rs.NewMutex(key, append(opts, extra...)...)
}

func (r *rsync) TryLock(ctx context.Context, key string, ttl time.Duration) (Held, error) {
	m := r.mutex(key, ttl, nil)
	err := m.TryLockContext(ctx)
	var taken *redsync.ErrTaken
	if errors.As(err, &taken) || errors.Is(err, redsync.ErrFailed) {
		return nil, ErrBusy
	}
	if err != nil {
		return nil, err
	}
	return rsyncHeld{m}, nil
}

func (r *rsync) Lock(ctx context.Context, key string, ttl time.Duration) (Held, error) {
	m := r.mutex(key, ttl, r.wait)
	if err := m.LockContext(ctx); err != nil {
		return nil, err
	}
	return rsyncHeld{m}, nil
}

type rsyncHeld struct{ m *redsync.Mutex }

func (h rsyncHeld) Unlock(ctx context.Context) error {
	ok, err := h.m.UnlockContext(ctx)
	if err != nil {
		return err
	}
	if !ok {
		return errors.New("redsync: unlock failed")
	}
	return nil
}
