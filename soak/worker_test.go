package soak

import (
	"context"
	"errors"
	"math/rand"
	"sync"
	"time"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/internal/testing/javareplay"
	goredislib "github.com/redis/go-redis/v9"
)

// Kind is a worker's kind: which locker it runs.
type Kind string

// The worker kinds.
const (
	Java         Kind = "java"           // the Java seed, replayed (internal/testing/javareplay)
	Atomic       Kind = "legacy-atomic"  // legacyproto.ModeAtomic
	Classic      Kind = "legacy-classic" // legacyproto.ModeClassic
	MigLegacy    Kind = "migrate-legacy" // migrate.WithPhase(PhaseLegacy)
	MigDualWrite Kind = "migrate-dual-write"
	MigDualRead  Kind = "migrate-dual-read"
	MigModern    Kind = "migrate-modern"
	Modern       Kind = "modern"  // auto-refresh and fencing
	Redlock      Kind = "redlock" // over three servers
)

// legacyOnly reports whether a holder of kind k holds the legacy key alone:
// exclusion from it rests on the legacy key and the clocks that judge it.
func (k Kind) legacyOnly() bool {
	switch k {
	case Java, Atomic, Classic, MigLegacy:
		return true
	}
	return false
}

// skewed reports whether kind k judges legacy expiries by a clock (and so
// gets a clock offset).
func (k Kind) skewed() bool {
	switch k {
	case Modern, Redlock:
		return false
	}
	return true
}

// literal reports whether kind k sends the Java commands literally (DEL
// on release, GETSET on takeover).
func (k Kind) literal() bool { return k == Java || k == Classic }

// held is one held lock, whatever the locker.
type held interface {
	unlock(ctx context.Context) error
	done() <-chan struct{}
	err() error
	fence() int64
	expiresAt() time.Time // the holder's view of its lease's end (zero: none)
}

// lockHeld adapts a lockbridge.Lock.
type lockHeld struct{ lk lockbridge.Lock }

func (l lockHeld) unlock(ctx context.Context) error { return l.lk.Unlock(ctx) }
func (l lockHeld) done() <-chan struct{}            { return l.lk.Done() }
func (l lockHeld) err() error                       { return l.lk.Err() }
func (l lockHeld) expiresAt() time.Time             { return l.lk.ExpiresAt() }
func (l lockHeld) fence() int64 {
	if f, ok := l.lk.(interface{ Fence() int64 }); ok {
		return f.Fence()
	}
	return 0
}

// javaHeld is a lock of the Java seed replay.
type javaHeld struct {
	w      *worker
	key    string
	expiry int64
}

var never = make(chan struct{})

func (j javaHeld) unlock(ctx context.Context) error {
	return javareplay.Unlock(ctx, j.w.recs[0], j.key, j.expiry, j.w.clock)
}
func (javaHeld) done() <-chan struct{} { return never }
func (javaHeld) err() error            { return nil }
func (javaHeld) fence() int64          { return 0 }
func (javaHeld) expiresAt() time.Time  { return time.Time{} }

// worker is one client process: its own proxies, Redis clients and
// locker, its own clock offset.
type worker struct {
	h      *harness
	name   string
	kind   Kind
	group  *group
	offset time.Duration
	lease  time.Duration
	rnd    *rand.Rand

	proxies []Faults
	rdbs    []*goredislib.Client
	recs    []*recorder
	locker  lockbridge.Locker
	closer  func(context.Context) error // the locker's Close, if any
	auto    bool                        // auto-refresh: Done is the lease signal

	mu    sync.Mutex
	stats workerStats
}

type workerStats struct {
	attempts, acquired, notObtained, acquireErrors int64
	released, notHeld, releaseErrors, lost         int64
	pauses, stalls                                 int64
	lateDone                                       int64 // Done seen open past ExpiresAt
}

func (w *worker) clock() time.Time { return time.Now().Add(w.offset) }

func (w *worker) count(f func(*workerStats)) {
	w.mu.Lock()
	f(&w.stats)
	w.mu.Unlock()
}

// try makes one acquire attempt on key.
func (w *worker) try(ctx context.Context, key string) (held, error) {
	if w.kind == Java {
		expiry, ok, err := javareplay.Lock(ctx, w.recs[0], key, w.lease, w.clock)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, lockbridge.ErrNotObtained
		}
		return javaHeld{w: w, key: key, expiry: expiry}, nil
	}
	lk, err := w.locker.TryLock(ctx, key, w.lease)
	if err != nil {
		return nil, err
	}
	return lockHeld{lk}, nil
}

const (
	opTimeout = time.Second // every call's context
	pPause    = 0.04        // a hold pauses past (or up to) its lease
	pStall    = 0.04        // an auto-refresh hold's connection stalls past its lease
	pLong     = 0.2         // an auto-refresh hold lasts several leases
)

// run takes locks on the group's keys until ctx ends.
func (w *worker) run(ctx context.Context) {
	for ctx.Err() == nil {
		key := w.group.keys[w.rnd.Intn(len(w.group.keys))]
		w.once(ctx, key)
		sleep(ctx, time.Duration(5+w.rnd.Intn(30))*time.Millisecond)
	}
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// once acquires key (trying for up to two leases), holds it and releases
// it, recording the hold.
func (w *worker) once(ctx context.Context, key string) {
	h := w.h
	giveUp := h.now() + 2*w.lease
	var (
		lk       held
		acqStart time.Duration
		e        entry
	)
	for {
		if ctx.Err() != nil {
			return
		}
		for _, r := range w.recs {
			r.lastEntry()
		}
		acqStart = h.now()
		opCtx, cancel := context.WithTimeout(ctx, opTimeout)
		var err error
		lk, err = w.try(opCtx, key)
		cancel()
		w.count(func(s *workerStats) { s.attempts++ })
		if err == nil {
			e = w.recs[0].lastEntry()
			break
		}
		if errors.Is(err, lockbridge.ErrNotObtained) && !errors.Is(err, context.DeadlineExceeded) {
			w.count(func(s *workerStats) { s.notObtained++ })
		} else {
			// An unknown outcome, a cut, a restart: not ours. A legacy
			// value that may have landed stays until it expires.
			w.count(func(s *workerStats) { s.acquireErrors++ })
			h.noteError(w, "acquire", err)
		}
		if h.now() > giveUp {
			return
		}
		sleep(ctx, time.Duration(5+w.rnd.Intn(25))*time.Millisecond)
	}
	acqRet := h.now()
	if e.sent == 0 {
		// No acquire command was seen to decide it (a locker settling an
		// unknown outcome another way): it ran within the call.
		e = entry{kind: entryUnknown, sent: acqStart, done: acqRet, wrote: e.wrote}
	}
	w.count(func(s *workerStats) { s.acquired++ })
	hd := &hold{w: w, key: key, acqStart: acqStart, acqRet: acqRet, entry: e, fence: lk.fence()}

	// The critical section. lastOK is the last moment the holder saw its
	// lock claimed valid (auto-refresh: Done still open, and ExpiresAt, the
	// holder's view of its lease's end, still ahead — Done's timer can run
	// late on a loaded machine, ExpiresAt is the claim).
	lastOK := acqRet
	late := false
	observe := func() bool {
		t := h.now()
		select {
		case <-lk.done():
			return false
		default:
		}
		if exp := lk.expiresAt(); !exp.IsZero() && !time.Now().Before(exp) {
			if !late {
				late = true
				w.count(func(s *workerStats) { s.lateDone++ })
			}
			return false
		}
		lastOK = t
		return true
	}
	switch r := w.rnd.Float64(); {
	case !w.auto && r < pPause:
		// A pause (GC, SIGSTOP) from 0.7 to 1.5 leases before the next
		// Redis call, the release.
		hd.paused = true
		w.count(func(s *workerStats) { s.pauses++ })
		time.Sleep(time.Duration(float64(w.lease) * (0.7 + 0.8*w.rnd.Float64())))
	case w.auto && r < pStall:
		// The process stalls, refresher included: its connection is held
		// for longer than the lease.
		hd.paused = true
		w.count(func(s *workerStats) { s.stalls++ })
		d := time.Duration(float64(w.lease) * (1.1 + 0.5*w.rnd.Float64()))
		for _, p := range w.proxies {
			p.Stall(d)
		}
		h.faults.add("stall", 1)
		w.holdObserving(observe, d)
	case w.auto && r < pStall+pLong:
		w.holdObserving(observe, time.Duration(float64(w.lease)*(1+2*w.rnd.Float64())))
	default:
		d := time.Duration(5+w.rnd.Intn(45)) * time.Millisecond
		if w.auto {
			w.holdObserving(observe, d)
		} else {
			time.Sleep(d)
		}
	}
	if w.auto {
		observe()
	}
	hd.relStart = h.now()
	relCtx, cancel := context.WithTimeout(context.Background(), opTimeout)
	err := lk.unlock(relCtx)
	cancel()
	hd.relRet = h.now()
	if w.auto {
		hd.end = lastOK
	} else {
		hd.end = minDur(hd.relStart, acqStart+w.lease-leaseSlack)
	}
	switch {
	case err == nil:
		w.count(func(s *workerStats) { s.released++ })
	case errors.Is(err, lockbridge.ErrNotHeld):
		w.count(func(s *workerStats) { s.notHeld++ })
	default:
		w.count(func(s *workerStats) { s.releaseErrors++ })
		h.noteError(w, "release", err)
	}
	select {
	case <-lk.done():
		if errors.Is(lk.err(), lockbridge.ErrLost) {
			hd.lost = true
			w.count(func(s *workerStats) { s.lost++ })
		}
	default:
	}
	h.addHold(hd)
}

// leaseSlack allows for Redis' cached command time (a PX lease may start up
// to a millisecond before the command was sent, by the server's clock).
const leaseSlack = 2 * time.Millisecond

func (w *worker) holdObserving(observe func() bool, d time.Duration) {
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		if !observe() {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func minDur(a, b time.Duration) time.Duration {
	if a < b {
		return a
	}
	return b
}

// newClient returns a go-redis client through p that never resends.
func newClient(p Faults) *goredislib.Client {
	return goredislib.NewClient(&goredislib.Options{
		Addr:                  p.Addr(),
		MaxRetries:            -1,
		DialTimeout:           500 * time.Millisecond,
		ReadTimeout:           opTimeout,
		WriteTimeout:          opTimeout,
		ContextTimeoutEnabled: true,
		PoolSize:              4,
	})
}

var _ driver.Client = (*recorder)(nil)
