package impls

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// releaseSrc is the compare-and-delete every library in the comparison uses
// in one form or another (redis.io's recipe).
const releaseSrc = `if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) else return 0 end`

// Floor is raw go-redis sending the two commands a token lock needs:
// SET key token NX PX ttl, then EVALSHA of a compare-and-delete. It writes a
// fixed token (a library draws a random one per acquire) and has no
// waiting acquire.
var Floor = Impl{
	ID:   "floor",
	Name: "go-redis floor (SET NX PX + EVALSHA)",
	New: func(c *redis.Client, _ Wait) (Locker, error) {
		sha, err := c.ScriptLoad(context.Background(), releaseSrc).Result()
		if err != nil {
			return nil, err
		}
		return &floor{c: c, sha: sha, token: "bench-floor-token-0123"}, nil
	},
}

type floor struct {
	c     *redis.Client
	sha   string
	token string
}

type floorHeld struct {
	f   *floor
	key string
}

func (f *floor) TryLock(ctx context.Context, key string, ttl time.Duration) (Held, error) {
	err := f.c.Do(ctx, "set", key, f.token, "nx", "px", ttl.Milliseconds()).Err()
	if err == redis.Nil {
		return nil, ErrBusy
	}
	if err != nil {
		return nil, err
	}
	return &floorHeld{f: f, key: key}, nil
}

func (f *floor) Lock(context.Context, string, time.Duration) (Held, error) {
	return nil, ErrNoWait
}

func (h *floorHeld) Unlock(ctx context.Context) error {
	n, err := h.f.c.EvalSha(ctx, h.f.sha, []string{h.key}, h.f.token).Int64()
	if err != nil {
		return err
	}
	if n != 1 {
		return errors.New("floor: lock not held")
	}
	return nil
}

// Ping sends one PING: the cost of a bare round trip.
func Ping(ctx context.Context, c *redis.Client) error {
	return c.Ping(ctx).Err()
}
