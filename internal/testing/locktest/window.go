package locktest

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/internal/testing/javareplay"
)

// LateHolder is the owner-window fault with the Redis host's clock
// ClientsAhead behind the clients': a holder releases (or refreshes) Late
// after its lease ended by its own clock, and the Java seed (javareplay)
// that took the legacy key over legitimately in between must keep its lock.
// The late release is refused with ErrNotHeld and leaves the seed's bytes,
// the late refresh does not overwrite them, the holder's lock is lost, and
// a third locker does not get in while the seed holds. Exclusion is counted
// by a guard that every party believing it holds enters.
type LateHolder struct {
	ClientsAhead, Late time.Duration
	Lease              time.Duration // the holder's
	SuccLease          time.Duration // the seed's: its value falls in the holder's window
	Rounds             int
	// Take takes the lock named key for Lease with the holder's clock now,
	// and returns it with the expiry W it wrote to the legacy key.
	Take func(t *testing.T, ctx context.Context, key string, now func() time.Time) (lockbridge.Lock, int64)
	// Check, when set, checks the late operation's error further.
	Check func(t *testing.T, err error)
	// Also, when set, names the keys besides key a round leaves behind.
	Also func(key string) []string
}

// Run runs the rounds of op ("unlock" or "refresh") on c.
func (s LateHolder) Run(t *testing.T, ctx context.Context, c driver.Client, op string) {
	t.Helper()
	key := Key(t, "k")
	clients := Skewed(s.ClientsAhead)
	guard := NewGuard(c, key)
	for i := 0; i < s.Rounds; i++ {
		// The holder read its clock lease + late ago (and was paused
		// since): by its own clock its lease ended late ago.
		clock := &OffsetClock{}
		clock.Set(s.ClientsAhead - s.Lease - s.Late)
		l, w := s.Take(t, ctx, key, clock.Now)
		clock.Set(s.ClientsAhead) // the pause is over

		// The Java seed sees the holder's expiry below its clock.
		succ, ok, err := javareplay.Lock(ctx, c, key, s.SuccLease, clients)
		require.NoError(t, err)
		require.True(t, ok, "the holder's lease has ended: the seed takes over")
		guard.Enter(t)
		require.LessOrEqual(t, 2*(succ-w), s.Lease.Milliseconds(), "the seed's value is inside the holder's window")
		theirs := strconv.FormatInt(succ, 10)

		if op == "unlock" {
			err = l.Unlock(ctx)
		} else {
			err = l.Refresh(ctx, s.Lease)
			if err == nil {
				guard.Enter(t) // the holder believes it holds again
				guard.Exit(t)
			}
		}
		assert.ErrorIs(t, err, lockbridge.ErrNotHeld, "round %d", i)
		assert.ErrorIs(t, l.Err(), lockbridge.ErrLost)
		if s.Check != nil {
			s.Check(t, err)
		}
		stored, _ := Get(t, c, key)
		assert.Equal(t, theirs, stored, "round %d: the seed's lock is untouched", i)

		// A third locker (the seed again) must not get in.
		third, ok, err := javareplay.Lock(ctx, c, key, s.SuccLease, clients)
		require.NoError(t, err)
		if ok {
			guard.Enter(t)
			guard.Exit(t)
			require.NoError(t, javareplay.Unlock(ctx, c, key, third, clients))
		}
		guard.Exit(t)
		require.NoError(t, javareplay.Unlock(ctx, c, key, succ, clients))
		keys := []any{"DEL", key}
		if s.Also != nil {
			for _, k := range s.Also(key) {
				keys = append(keys, k)
			}
		}
		_, err = c.Do(ctx, keys...)
		require.NoError(t, err)
	}
	assert.Zero(t, guard.Violations(), "two holders at once, in %d of %d rounds", guard.Violations(), s.Rounds)
}
