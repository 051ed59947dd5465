package redisson_test

import (
	"context"
	"sync"
	"testing"
	"time"

	goredislib "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"

	"github.com/lockbridge/lockbridge/driver/goredis"
	"github.com/lockbridge/lockbridge/internal/testing/faultproxy"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/internal/testing/redistest"
	"github.com/lockbridge/lockbridge/redisson"
)

// A fenced acquire's reply is lost and the hold is settled by reading it
// back; the lease runs out while the read-back is on the wire and another
// owner takes the lock (the next token). The hold the read-back returns, if
// any, must not carry that owner's token: fences of two holders are never
// equal, or storage guarding writes by the highest fence takes both.
func TestFaultFencedReadBackNeverSharesAToken(t *testing.T) {
	srv := redistest.Start(t)
	p := faultproxy.Start(t, srv.Addr())
	rdb := goredislib.NewClient(&goredislib.Options{Addr: p.Addr(), MaxRetries: -1, MinIdleConns: 4, PoolSize: 4})
	t.Cleanup(func() { _ = rdb.Close() })
	raw := locktest.GoRedis(t, srv)
	for _, s := range redisson.Scripts() {
		locktest.Do(t, raw, "SCRIPT", "LOAD", s.Source())
	}
	ctx := locktest.Ctx(t)
	key := locktest.Key(t, "k")
	c := goredis.New(rdb)
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ { // the pool's connections are open before the delay
		wg.Add(1)
		go func() { defer wg.Done(); _, _ = c.Do(ctx, "BLPOP", "nothing:"+key, "0.05") }()
	}
	wg.Wait()
	l := redisson.New(c, redisson.WithFencing())
	other := redisson.New(raw, redisson.WithFencing())

	theirs := make(chan *redisson.Lock, 1)
	go func() { // the other owner takes the lock as soon as ours ends
		for ctx.Err() == nil {
			if n, _ := raw.Do(ctx, "EXISTS", key); n == int64(1) {
				break
			}
			time.Sleep(time.Millisecond)
		}
		for ctx.Err() == nil {
			if lk, err := other.TryLock(ctx, key, time.Minute); err == nil {
				theirs <- lk.(*redisson.Lock)
				return
			}
			time.Sleep(2 * time.Millisecond)
		}
	}()

	p.DropReply(faultproxy.Script(script(t, "fenced_acquire.lua")), 1, faultproxy.Close)
	p.Delay(200 * time.Millisecond)
	mine, err := l.NewOwner().TryLock(context.Background(), key, 400*time.Millisecond)
	p.Delay(0)
	them := <-theirs
	defer func() { _ = them.Unlock(ctx) }()
	if err != nil {
		t.Logf("refused: %v", err)
		return // refused: no hold, no shared token
	}
	assert.Less(t, mine.(*redisson.Lock).Fence(), them.Fence(), "the earlier hold's fence is below the later's")
}
