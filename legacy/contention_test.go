package legacy_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/internal/protocol/legacyproto"
	"github.com/lockbridge/lockbridge/internal/testing/javareplay"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/legacy"
)

func init() {
	lockerBehaviours = append(lockerBehaviours,
		behaviour{"Contention", func(t *testing.T, tg locktest.Target) {
			contend(t, []driver.Client{tg.Client}, contention{lease: 5 * time.Second, rounds: 3})
		}},
		behaviour{"ContentionWithCrashes", func(t *testing.T, tg locktest.Target) {
			contend(t, []driver.Client{tg.Client}, contention{lease: 300 * time.Millisecond, rounds: 3, crashes: true})
		}})
}

// Go (atomic and classic, on go-redis and on redigo) and the Java seed,
// all on one key of one server.
func TestContentionMixedClients(t *testing.T) {
	t.Parallel()
	ts := locktest.Single(t)
	clients := []driver.Client{ts[0].Client, ts[1].Client}
	t.Run("Clean", func(t *testing.T) {
		contend(t, clients, contention{lease: 5 * time.Second, rounds: 4})
	})
	t.Run("Crashes", func(t *testing.T) {
		contend(t, clients, contention{lease: 300 * time.Millisecond, rounds: 3, crashes: true})
	})
}

type contention struct {
	lease   time.Duration
	rounds  int
	crashes bool // some holders never unlock: the others must take over
}

const participants = 16

// contend runs 16 goroutines over one key — atomic lockers, classic
// lockers and replays of the Java seed (its lock() and time-checked DEL),
// in turn, on the clients in turn — each taking the lock c.rounds times
// and holding it for 2 ms, checked by the guard counter. With crashes, a
// quarter of the participants abandon the lock once, without unlocking.
// Nobody may overlap, and every participant must acquire every round.
func contend(t *testing.T, clients []driver.Client, c contention) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	key := locktest.Key(t, "contended")
	g := locktest.NewGuard(clients[0], key)
	const hold = 2 * time.Millisecond

	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		errs     []error
		notHeld  int
		acquired [participants]int
	)
	fail := func(err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
	}
	for i := 0; i < participants; i++ {
		i := i
		cl := clients[i%len(clients)]
		kind := []string{"atomic", "classic", "seed"}[i%3]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := 0; r < c.rounds; r++ {
				crash := c.crashes && i%4 == 0 && r == 1
				switch kind {
				case "seed":
					w, err := javareplay.Acquire(ctx, cl, key, c.lease, nil)
					if err != nil {
						fail(fmt.Errorf("seed %d: %w", i, err))
						return
					}
					g.Hold(t, hold)
					if !crash {
						if err := javareplay.Unlock(ctx, cl, key, w, nil); err != nil {
							fail(fmt.Errorf("seed %d: %w", i, err))
							return
						}
					}
				default:
					mode := legacyproto.ModeAtomic
					if kind == "classic" {
						mode = legacyproto.ModeClassic
					}
					l, err := legacy.New(cl, legacyproto.WithMode(mode)).Lock(ctx, key, c.lease)
					if err != nil {
						fail(fmt.Errorf("%s %d: %w", kind, i, err))
						return
					}
					g.Hold(t, hold)
					if !crash {
						err := l.Unlock(ctx)
						if c.crashes && errors.Is(err, lockbridge.ErrNotHeld) {
							// A loser's overwrite from far outside the window
							// (a contender stalled between GET and GETSET):
							// liveness only; the lock frees itself at W.
							mu.Lock()
							notHeld++
							mu.Unlock()
						} else if err != nil {
							fail(fmt.Errorf("%s %d: unlock: %w", kind, i, err))
							return
						}
					}
				}
				mu.Lock()
				acquired[i]++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	require.Empty(t, errs)
	assert.Equal(t, int64(0), g.Violations(), "two holders were inside at once")
	assert.Equal(t, int64(participants*c.rounds), g.Entries())
	for i, n := range acquired {
		assert.Equal(t, c.rounds, n, "participant %d", i)
	}
	if notHeld > 0 {
		t.Logf("%d releases found a loser's value outside the window", notHeld)
	}
}
