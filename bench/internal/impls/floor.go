package impls

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// releaseSrc is the compare-and-delete every library in the comparison uses
// in one form or another (redis.io's recipe).
const releaseSrc = `if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) else return 0 end`

// newToken is the floor's token: 16 bytes from crypto/rand, unpadded
// base64url, drawn afresh for every acquire — what a correct token lock must
// do, and what lockbridge modern and bsm/redislock do.
func newToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand panics instead)
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// Floor is the minimal correct token lock written by hand on raw go-redis,
// on the same client as the implementation it is compared with: a random
// token per acquire, SET key token NX PX ttl, then EVALSHA of the
// compare-and-delete. It has no waiting acquire.
var Floor = Impl{
	ID:   "floor",
	Name: "go-redis floor (SET NX PX + EVALSHA)",
	New: func(t Target, _ Wait) (Locker, error) {
		sha, err := t.GoRedis.ScriptLoad(context.Background(), releaseSrc).Result()
		if err != nil {
			return nil, err
		}
		return &floor{c: t.GoRedis, sha: sha}, nil
	},
}

type floor struct {
	c   redis.UniversalClient
	sha string
}

type floorHeld struct {
	f     *floor
	key   string
	token string
}

func (f *floor) TryLock(ctx context.Context, key string, ttl time.Duration) (Held, error) {
	token := newToken()
	err := f.c.Do(ctx, "set", key, token, "nx", "px", ttl.Milliseconds()).Err()
	if errors.Is(err, redis.Nil) {
		return nil, ErrBusy
	}
	if err != nil {
		return nil, err
	}
	return &floorHeld{f: f, key: key, token: token}, nil
}

func (f *floor) Lock(context.Context, string, time.Duration) (Held, error) {
	return nil, ErrNoWait
}

func (h *floorHeld) Unlock(ctx context.Context) error {
	n, err := h.f.c.EvalSha(ctx, h.f.sha, []string{h.key}, h.token).Int64()
	if err != nil {
		return err
	}
	if n != 1 {
		return errors.New("floor: lock not held")
	}
	return nil
}

// Ping sends one PING: the cost of a bare round trip.
func Ping(ctx context.Context, c redis.UniversalClient) error {
	return c.Ping(ctx).Err()
}
