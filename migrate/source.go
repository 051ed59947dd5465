package migrate

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/lockbridge/lockbridge/driver"
)

// DefaultPhaseInterval is how often a Locker with WithPhaseFrom re-reads the
// phase and heartbeats into the fleet registry. A heartbeat is valid for
// three intervals.
const DefaultPhaseInterval = 2 * time.Second

// follower tracks the phase a Locker runs when the phase comes from Redis:
// it re-reads the phase key at an interval and on a phase-change notice,
// moves at most one phase per reading towards the stored one, and heartbeats
// its id and phase into the fleet registry. Its goroutine starts on first use
// and stops on close.
type follower struct {
	s        store
	id, host string
	pid      int
	interval time.Duration
	now      func() time.Time
	fixed    Phase // a fixed phase (WithPhase + WithNamespace): heartbeat only

	mu      sync.Mutex
	current Phase // 0 until the first reading
	closed  bool
	stop    chan struct{}
	done    chan struct{}
}

func newFollower(c driver.Client, k nsKeys, interval time.Duration, now func() time.Time) *follower {
	host, _ := os.Hostname()
	var b [6]byte
	_, _ = rand.Read(b[:])
	return &follower{
		s:        store{c: c, k: k},
		id:       fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b[:])),
		host:     host,
		pid:      os.Getpid(),
		interval: interval,
		now:      now,
	}
}

// phase returns the phase to run now. The first call reads it from Redis
// (and starts the background loop); later calls answer from memory.
func (f *follower) phase(ctx context.Context) (Phase, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return 0, fmt.Errorf("migrate: locker closed")
	}
	if f.current != 0 {
		return f.current, nil
	}
	p := f.fixed
	if p == 0 {
		var err error
		if p, err = f.s.phase(ctx); err != nil {
			return 0, err
		}
	}
	if err := f.s.heartbeat(ctx, f.client(p)); err != nil {
		return 0, err // not started: the next call tries again from scratch
	}
	f.current = p
	f.stop, f.done = make(chan struct{}), make(chan struct{})
	go f.loop(f.stop, f.done)
	return p, nil
}

func (f *follower) client(p Phase) Client {
	now := f.now()
	return Client{ID: f.id, Phase: p, Host: f.host, PID: f.pid, Seen: now, Expires: now.Add(3 * f.interval)}
}

// step moves current one phase towards target; it returns the new phase.
func (f *follower) step(target Phase) Phase {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case target > f.current:
		f.current++
	case target < f.current:
		f.current--
	}
	return f.current
}

func (f *follower) loop(stop, done chan struct{}) {
	defer close(done)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { <-stop; cancel() }()

	var notices <-chan driver.Message
	var sub driver.Subscription
	defer func() {
		if sub != nil {
			_ = sub.Close()
		}
	}()
	ticker := time.NewTicker(f.interval)
	defer ticker.Stop()
	for {
		if f.fixed == 0 && (sub == nil || sub.Err() != nil) { // (re)subscribe; polling covers any gap
			if sub != nil {
				_ = sub.Close()
			}
			sub, notices = nil, nil
			sctx, scancel := context.WithTimeout(ctx, f.interval)
			if s, err := f.s.c.Subscribe(sctx, f.s.k.channel); err == nil {
				sub, notices = s, s.Messages()
				scancel()
				f.refresh(ctx) // a change before the subscription sent no notice we saw
				continue
			}
			scancel()
		}
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		case _, ok := <-notices:
			if !ok {
				notices = nil
			}
		}
		f.refresh(ctx)
	}
}

// refresh reads the phase, steps towards it, and heartbeats. Errors are
// left for the next round: the locker keeps its phase meanwhile.
func (f *follower) refresh(ctx context.Context) {
	rctx, cancel := context.WithTimeout(ctx, f.interval)
	defer cancel()
	target := f.fixed
	if target == 0 {
		var err error
		if target, err = f.s.phase(rctx); err != nil {
			return
		}
	}
	_ = f.s.heartbeat(rctx, f.client(f.step(target)))
}

// close stops the loop and removes the registry entry.
func (f *follower) close(ctx context.Context) error {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return nil
	}
	f.closed = true
	stop, done := f.stop, f.done
	f.mu.Unlock()
	if stop == nil {
		return nil // never started
	}
	close(stop)
	<-done
	return f.s.leave(ctx, f.id)
}
