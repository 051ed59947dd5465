package legacy_test

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/driver/goredis"
	"github.com/lockbridge/lockbridge/driver/keyslot"
	"github.com/lockbridge/lockbridge/internal/protocol/resp"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/internal/testing/redistest"
	"github.com/lockbridge/lockbridge/legacy"
)

// In ModeClassic the release is a DEL (and the refresh a GETSET) that the
// holder decides on by its own clock, before W. When the cluster refuses
// it (CLUSTERDOWN: here the slot's master drops the slot, as a node does
// while the cluster is failing) the adapter sends it again after pauses
// (adapter.ClusterRetryFor): it must not be sent once W has passed, when a
// Java client may have taken the lock over. Here the slot comes back just
// after W, and a Java client takes the expired lock over (SETNX, GET,
// GETSET) before the adapter's next try. Before the fix that late DEL
// deleted the Java holder's lock (a third client could then SETNX it: two
// holders), and the late GETSET overwrote the Java holder's expiry with the
// refresh's earlier one.
func TestFaultClassicNotSentPastW(t *testing.T) {
	cl := redistest.StartCluster(t)
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cl.Addrs(), MaxRetries: -1, MaxRedirects: -1})
	t.Cleanup(func() { _ = rdb.Close() })
	for _, op := range []string{"unlock", "refresh"} {
		t.Run(op, func(t *testing.T) {
			ctx := locktest.Ctx(t)
			key := "classic-past-w:" + op
			slot := strconv.Itoa(keyslot.Of(key))
			owner := cl.Owner(t, keyslot.Of(key))
			admin, err := resp.Dial(owner.Addr(), 2*time.Second)
			require.NoError(t, err)
			defer admin.Close()

			c := newSpy(goredis.New(rdb))
			l, err := legacy.New(c, legacy.WithClassic()).TryLock(ctx, key, time.Second)
			require.NoError(t, err)
			lk := l.(*legacy.Lock)
			refused := make(chan error, 1)
			refuse := func() { // on the goroutine of the Unlock or Refresh
				conn, err := resp.Dial(owner.Addr(), 2*time.Second)
				if err == nil {
					_, err = conn.Do("CLUSTER", "DELSLOTS", slot)
					_ = conn.Close()
				}
				refused <- err
			}
			// Refused from the command that writes on: the DEL, or the
			// GETSET after the refresh's GET found our value.
			if op == "unlock" {
				c.Before("DEL", refuse)
			} else {
				c.Before("GETSET", refuse)
			}
			done := make(chan error, 1)
			go func() {
				if op == "unlock" {
					done <- l.Unlock(ctx)
				} else {
					done <- l.Refresh(ctx, time.Second)
				}
			}()

			require.NoError(t, <-refused)
			// Past W by our clock, the slot is served again, and a Java
			// client takes the expired lock over at once, between two
			// tries of the adapter (the pause between them is 100 ms by
			// now; the node's CLUSTERDOWN count says when one was refused).
			time.Sleep(time.Until(lk.ExpiresAt()) + 100*time.Millisecond)
			refusals := clusterDown(t, admin)
			require.Eventually(t, func() bool { return len(done) > 0 || clusterDown(t, admin) > refusals },
				time.Second, time.Millisecond, "no try since W, and the %s has not returned", op)
			_, err = admin.Do("CLUSTER", "ADDSLOTS", slot)
			require.NoError(t, err)
			java := strconv.FormatInt(time.Now().Add(10*time.Second).UnixMilli(), 10)
			set, err := admin.Do("SETNX", key, java)
			require.NoError(t, err)
			require.Equal(t, int64(0), set)
			old, err := admin.Do("GETSET", key, java)
			require.NoError(t, err)
			require.Equal(t, lk.Value(), old, "the Java client took over our expired value")

			err = <-done
			t.Logf("%s: %v", op, err)
			v, err := admin.Do("GET", key)
			require.NoError(t, err)
			assert.Equal(t, java, v, "the Java holder's lock stands")
			_, err = legacy.New(goredis.New(rdb), legacy.WithClassic()).TryLock(ctx, key, time.Second)
			assert.ErrorIs(t, err, lockbridge.ErrNotObtained, "a third client while the Java client holds")
		})
	}
}

// clusterDown is the node's count of CLUSTERDOWN replies.
func clusterDown(t *testing.T, conn *resp.Conn) int {
	r, err := conn.Do("INFO", "errorstats")
	require.NoError(t, err)
	var n int
	if v := resp.ParseInfo(fmt.Sprint(r))["errorstat_CLUSTERDOWN"]; v != "" {
		_, err := fmt.Sscanf(v, "count=%d", &n)
		require.NoError(t, err)
	}
	return n
}
