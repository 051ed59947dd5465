package modern

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/internal/runtime/check"
)

// Refresh extends the lease to ttl from now (at least 1 ms; sub-millisecond
// parts are dropped) if the lock is still ours. When it is not, Refresh
// returns a *lockbridge.NotHeldError (wrapping lockbridge.ErrNotHeld) and the lock
// counts as lost: Done is closed and Err wraps lockbridge.ErrLost. A lock
// already released, or already known lost, is not refreshed: the error
// wraps ErrNotHeld. With WithAutoRefresh the later refreshes use the new ttl.
func (lk *Lock) Refresh(ctx context.Context, ttl time.Duration) error {
	if err := lk.valid(ctx, errNilLockCall); err != nil {
		return err
	}
	if err := check.TTL("modern", ttl, time.Millisecond); err != nil {
		return err
	}
	lk.mu.Lock()
	defer lk.mu.Unlock()
	if lk.released.Load() {
		return lk.errReleased()
	}
	if lk.lease.Ended() { // a lock whose lease ended is over: no refresh revives it
		return fmt.Errorf("modern: refresh of a lost lock: %w: %w", lockbridge.ErrNotHeld, lk.lease.Err())
	}
	return lk.refresh(ctx, ttl.Truncate(time.Millisecond))
}

// refresh runs the refresh script and records the outcome in the lease. It
// is the auto-refresh's callback too (through autoRefresh); rounds
// serialises the two, so the lease always records the round that reached
// Redis last, and the auto-refresh never waits behind a Refresh by hand
// (see lease.Rounds). ttl 0 means the lease's current ttl, read in the
// turn: a Refresh just done wins. The lease is shortened before the send
// (lease.Sending): a shorter ttl may take effect whether or not the reply
// comes.
func (lk *Lock) refresh(ctx context.Context, ttl time.Duration) error {
	auto := ttl == 0
	if err := lk.rounds.Enter(auto); err != nil {
		return err
	}
	defer lk.rounds.Leave()
	if auto {
		ttl = lk.lease.TTL()
	}
	start := time.Now()
	lk.lease.Sending(start, ttl)
	code, acked, err := lk.send(ctx, ttl)
	if errors.Is(err, lockbridge.ErrUnknownOutcome) {
		// It may still run at any later time, after a grant confirmed
		// meanwhile: no grant counts for more than ttl from now on. It is
		// never sent again (no resends); the lease ends by its timer
		// unless a later round is confirmed.
		lk.lease.Unsure(ttl)
	}
	if err != nil {
		return err
	}
	if code == codeOurs {
		if want := lk.locker.cfg.WaitN; want > 0 && acked < int64(want) {
			// Extended on the primary only: a failover to a replica that
			// acknowledged the acquire would keep the key with the lease
			// it had before. The lease keeps its end (Sending has
			// shortened it already for a shorter ttl); the auto-refresh
			// tries again, and the lock ends at that end if no refresh is
			// acknowledged.
			return &ReplicationError{Key: lk.names.Key, Acked: acked, want: want, refresh: true}
		}
		return lk.lease.Extend(start.Add(ttl), ttl)
	}
	return lk.lost(code)
}

// send runs the refresh script, followed with WithWait by WAIT on its
// connection: the script's code and, with WithWait, how many replicas
// acknowledged it (a failed WAIT: 0, its error dropped — the refresh ran,
// it is just not counted).
func (lk *Lock) send(ctx context.Context, ttl time.Duration) (code, acked int64, err error) {
	l := lk.locker
	if l.cfg.WaitN == 0 {
		code, err = l.node.Refresh(ctx, &lk.names, lk.arg, ttl)
		return code, 0, err
	}
	code, acked, err = l.node.RefreshWait(ctx, &lk.names, lk.arg, ttl, l.cfg.WaitN, l.cfg.WaitTimeout)
	if err != nil && code == codeOurs && !errors.Is(err, lockbridge.ErrUnknownOutcome) {
		return code, 0, nil
	}
	return code, acked, err
}

// autoRefresh is the lease's RefreshFunc: refresh with the current ttl.
func (lk *Lock) autoRefresh(ctx context.Context) error {
	return lk.refresh(ctx, 0)
}
