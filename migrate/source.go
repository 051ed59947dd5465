package migrate

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/internal/protocol/migrateproto"
	"github.com/lockbridge/lockbridge/internal/runtime/telemetry"
)

// DefaultPhaseInterval is how often a Locker with WithPhaseFrom or
// WithNamespace re-reads the phase and heartbeats into the fleet registry
// while it does not hear the phase notices (or its last reading failed).
// While it hears them — a notice makes it read at once — it reads only as
// often as its phase lease needs: two intervals before the lease would
// lapse (every 10 intervals, 20 s, by default).
const DefaultPhaseInterval = 2 * time.Second

// maxHold is the longest hold a heartbeat registers (heartbeat.lua takes
// 1 ms to 2^40 ms): a following Locker's phase lease plus its longest ttl.
const maxHold = (1 << 40) * time.Millisecond

// DefaultPhaseLeaseIntervals is the default phase lease in phase intervals:
// a Locker that has not read its phase for twelve intervals (24 s by
// default) stops locking until it reads it again. A Locker that hears the
// phase notices reads every lease minus two intervals; one that misses a
// reading tries again every interval.
const DefaultPhaseLeaseIntervals = 12

// heldReport is what a Locker holds, for its heartbeat.
type heldReport struct {
	oldest, newest Phase         // 0 when nothing is held
	left           time.Duration // the longest remaining lease
	ttl            time.Duration // the longest lease of a held lock
}

// follower tracks the phase a Locker runs when it has a namespace: it reads
// the phase and heartbeats into the registry in one script, at an interval
// and on a phase-change notice, moves at most one phase per reading towards
// the stored one, and holds a phase lease — it trusts the phase it read only
// until lease after the reading was sent, by its monotonic clock. Its
// goroutine starts on the first good reading and stops on close.
type follower struct {
	s        store
	id, host string
	pid      int
	interval time.Duration
	lease    time.Duration
	fixed    Phase               // a fixed phase (WithPhase + WithNamespace): heartbeat only
	held     func() heldReport   // the Locker's held locks; nil for none
	onStep   func(current Phase) // called after the phase moved, outside mu
	tel      *telemetry.T        // logs failed readings and phase moves; nil off

	syncMu sync.Mutex     // serialises readings
	beats  sync.WaitGroup // heartbeats that may be on their way (heartbeat)

	mu       sync.Mutex
	current  Phase     // 0 until the first good reading
	ran      bool      // a phase of this namespace was ever run
	instance int64     // the namespace instance read last (0: none)
	gen      int64     // the highest generation read
	until    time.Time // end of the phase lease (monotonic); zero: none
	refusal  error     // a reading found the phase untrustworthy: refuse until the next good one
	lastErr  error     // why the last reading failed
	maxTTL   time.Duration
	seq      int64 // the last heartbeat's sequence number
	sent     bool  // a heartbeat was sent: close removes the entry
	// unanswered: a heartbeat got no reply (an unknown outcome: the
	// client's read timeout, a broken connection, a phase lease awaited in
	// vain) and may still land, after a removal too; close then leaves the
	// entry dead instead (see close).
	unanswered bool
	// stored is the entry the last confirmed write put in the registry,
	// valid while confirmed: a heartbeat whose entry is the same touches.
	stored    migrateproto.Entry
	confirmed bool
	lastGood  time.Time // when the last good reading was sent (monotonic)
	shard     int       // the notice channel it listens on
	closed    bool
	stop      chan struct{}
	done      chan struct{}
}

func newFollower(c driver.Client, k migrateproto.Keys, interval, lease time.Duration) *follower {
	host, _ := os.Hostname()
	var b [6]byte
	_, _ = rand.Read(b[:])
	return &follower{
		s:        store{c: c, k: k},
		id:       fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b[:])),
		host:     host,
		pid:      os.Getpid(),
		interval: interval,
		lease:    lease,
		shard:    int(b[0]) % migrateproto.NoticeShards,
	}
}

// phase returns the phase to run a lock of ttl in now. While the phase
// lease runs (and covers ttl) it answers from memory; otherwise it reads
// the phase first, and refuses with a *PhaseUnknownError when it cannot.
// on, when not nil, is called with the phase and the end of the phase
// lease under the follower's mutex, so a lock call registers its acquire
// in that phase before the follower can move (and heartbeat without it).
// It also returns the end of the lease (monotonic): a lock call whose
// command comes back after it may have run after the registry stopped
// counting this client (a pause between the check and the send), and must
// not trust what it did.
func (f *follower) phase(ctx context.Context, ttl time.Duration, on func(Phase, time.Time)) (Phase, time.Time, error) {
	if longest := maxHold - f.lease; ttl > longest {
		return 0, time.Time{},
			fmt.Errorf("%s: %w: ttl %v is above %v: the registry counts a client for at most %v after a heartbeat, its phase "+
				"lease %v included", pkg, lockbridge.ErrInvalid, ttl, longest, maxHold, f.lease)
	}
	if p, until, ok, err := f.valid(ttl, on); ok || err != nil {
		return p, until, err
	}
	if err := f.sync(ctx, ttl); err != nil {
		return 0, time.Time{}, err
	}
	p, until, ok, err := f.valid(ttl, on)
	if err != nil {
		return 0, time.Time{}, err
	}
	if !ok {
		return 0, time.Time{}, f.lapsed()
	}
	return p, until, nil
}

// valid answers from memory: the phase, and whether the lease runs and its
// registered hold covers a lock of ttl. When it does, on sees the phase
// and the lease's end.
func (f *follower) valid(ttl time.Duration, on func(Phase, time.Time)) (Phase, time.Time, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return 0, time.Time{}, false, fmt.Errorf("migrate: locker closed")
	}
	if f.refusal != nil {
		return 0, time.Time{}, false, nil // read again: it may have been repaired
	}
	if f.current == 0 || !time.Now().Before(f.until) || ttl > f.maxTTL {
		return 0, time.Time{}, false, nil
	}
	if on != nil {
		on(f.current, f.until)
	}
	return f.current, f.until, true, nil
}

// trusted reports whether the phase lease runs, for a refresh to ttl, and
// until when (see phase).
func (f *follower) trusted(ctx context.Context, ttl time.Duration) (time.Time, error) {
	_, until, err := f.phase(ctx, ttl, nil)
	return until, err
}

// outlived is the error of a lock call whose command came back after the
// phase lease it was sent under had ended, at or after until.
func (f *follower) outlived(p Phase, what string) error {
	return &PhaseUnknownError{Namespace: f.s.k.NS, Reason: ReasonLeaseLapsed, Last: p,
		Cause: fmt.Errorf("the %s came back after the phase lease it was sent under had ended (a pause between the check "+
			"and the send?): the registry may no longer have counted this client when it ran", what),
		Remedy: "it locks again once it reads the phase (Redis must be reachable for the namespace's keys)"}
}

func (f *follower) lapsed() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.refusal != nil {
		return f.refusal
	}
	return &PhaseUnknownError{Namespace: f.s.k.NS, Reason: ReasonLeaseLapsed, Last: f.current, Cause: f.lastErr,
		Remedy: "it locks again once it reads the phase (Redis must be reachable for the namespace's keys)"}
}

// sync brings the follower up to date. A reading heartbeats and reads the
// phase; when the follower wants to move, a second heartbeat announces the
// phase it moves to (the entry's next) and reads again, the follower moves
// only if that reading still wants the same phase, and a third heartbeat
// reports the new phase at once. So a Locker runs a phase only once its
// registry entry shows it: the controller, which treats an entry as being
// in both phase and next, can never step or roll back past a phase the
// client may already run. It starts the loop on the first good reading.
func (f *follower) sync(ctx context.Context, ttl time.Duration) error {
	f.syncMu.Lock()
	defer f.syncMu.Unlock()
	r, err := f.reading(ctx, ttl, 0)
	if err != nil {
		return err
	}
	if r.want != r.ran {
		a, err := f.reading(ctx, ttl, r.want)
		if err != nil {
			return err
		}
		if a.want == r.want && a.ran == r.ran {
			f.move(a)
			if _, err := f.reading(ctx, ttl, 0); err != nil {
				return err
			}
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stop == nil && !f.closed && f.current != 0 {
		f.stop, f.done = make(chan struct{}), make(chan struct{})
		go f.loop(f.stop, f.done)
	}
	return nil
}

// read is what one reading found.
type read struct {
	ran, want Phase         // the phase run when it was sent, the one to run
	start     time.Time     // when it was sent: a lease it grants runs from here
	maxTTL    time.Duration // the hold it registered covers locks of this ttl
}

// reading is one heartbeat and reading of the phase. The entry reports the
// phase run now and, when not 0, next: the phase the follower is about to
// move to. The phase lease is renewed only when the reading agrees with the
// phase run (want == ran); a reading that wants a move leaves the lease as
// it was, for the move to renew.
func (f *follower) reading(ctx context.Context, ttl time.Duration, next Phase) (read, error) {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return read{}, fmt.Errorf("migrate: locker closed")
	}
	e := f.entryLocked(next)
	r := read{ran: f.current, maxTTL: max(f.maxTTL, ttl), start: time.Now()}
	// Lapsed: the lease had ended (or never began) before this reading.
	lapsed := f.refusal != nil || !r.start.Before(f.until)
	f.sent = true
	f.mu.Unlock()
	var h heldReport
	if f.held != nil {
		h = f.held()
		withHeld(&e, h)
		r.maxTTL = max(r.maxTTL, h.ttl)
	}
	// The hold: how long after this heartbeat the controller must count us
	// at e.Phase. A lock taken or refreshed just before the lease lapses
	// lasts its ttl beyond it.
	hold := f.lease + r.maxTTL
	r.start = time.Now()
	rep, err := f.beat(ctx, e, hold)
	f.mu.Lock()
	defer f.mu.Unlock()
	if err != nil {
		f.lastErr = err
		return read{}, &PhaseUnknownError{Namespace: f.s.k.NS, Reason: ReasonLeaseLapsed, Last: f.current, Cause: err,
			Remedy: "it locks again once it reads the phase (Redis must be reachable for the namespace's keys)"}
	}
	f.lastErr = nil
	f.lastGood = r.start
	target, refusal := f.judge(rep)
	if refusal != nil {
		f.refusal, f.until = refusal, time.Time{}
		return read{}, refusal
	}
	f.refusal = nil
	if f.fixed == 0 {
		f.ran = true
	}
	// A lock whose lease has run out holds nothing: it does not keep a
	// returning follower from starting afresh.
	r.want = want(f.current, target, lapsed && (h.oldest == 0 || h.left <= 0))
	if r.want == f.current {
		f.until, f.maxTTL = r.start.Add(f.lease), r.maxTTL
	}
	return r, nil
}

// beat sends one heartbeat: a touch naming the last confirmed write (its
// seq) when e says what that write stored, else the entry; and the entry
// at once when a touch found none, or another than the one it names
// (forgotten or pruned meanwhile, and maybe an older write of ours landed
// late since). It keeps what the registry holds.
// A heartbeat that wrote nothing because an entry with a seq at or above
// its own stands is an error: readings go one at a time, so that entry is
// not this locker's newer one, and the registry does not count the locker
// on it — the reading must renew no phase lease.
func (f *follower) beat(ctx context.Context, e migrateproto.Entry, hold time.Duration) (syncReply, error) {
	f.mu.Lock()
	var renews int64 // the seq of the entry a touch renews; 0: send the entry
	if f.confirmed && e.Same(f.stored) {
		renews = f.stored.Seq
	}
	f.mu.Unlock()
	touch := renews != 0
	rep, err := f.heartbeat(ctx, e, hold, renews)
	if err == nil && touch && rep.Written < 0 {
		f.mu.Lock()
		f.seq++
		e.Seq = f.seq
		f.mu.Unlock()
		touch = false
		rep, err = f.heartbeat(ctx, e, hold, 0)
	}
	if err == nil && rep.Written == 0 {
		err = fmt.Errorf("migrate: heartbeat: the registry holds an entry for %q with a seq at or above %d that this "+
			"locker did not write, so it does not count this locker; if no other process runs under that id: `lockbridge "+
			"fleet forget --namespace %s --force %s`", e.ID, e.Seq, f.s.k.NS, e.ID)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case err != nil || rep.Written != 1:
		f.confirmed = false // unknown, or a newer entry stands: write it next time
	case !touch:
		f.stored, f.confirmed = e, true
	}
	return rep, err
}

// heartbeat sends one heartbeat and waits for its reply, or for ctx to
// end. A heartbeat whose caller gives up stays on its way: it is awaited
// on a goroutine of its own, for up to a phase lease, which close waits
// for before the entry's leave. Abandoned instead (the client adapter
// returns at once when ctx ends), it could land after the leave and
// register the closed locker again, at its phase, for its whole hold. One
// that gets no reply at all (the client's read timeout, a broken
// connection, or still none after a phase lease) may land so too, at any
// later time: it is recorded (unanswered), and close leaves the entry dead
// with a newer seq, which it cannot overwrite.
func (f *follower) heartbeat(ctx context.Context, e migrateproto.Entry, hold time.Duration,
	renews int64) (syncReply, error) {
	if err := ctx.Err(); err != nil {
		return syncReply{}, err
	}
	type result struct {
		rep syncReply
		err error
	}
	ch := make(chan result, 1)
	f.beats.Add(1)
	go func() {
		defer f.beats.Done()
		bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), f.lease)
		defer cancel()
		rep, err := f.s.heartbeat(bctx, e, hold, renews)
		if errors.Is(err, lockbridge.ErrUnknownOutcome) {
			f.mu.Lock()
			f.unanswered = true
			f.mu.Unlock()
		}
		ch <- result{rep, err}
	}()
	select {
	case r := <-ch:
		return r.rep, r.err
	case <-ctx.Done():
		return syncReply{}, fmt.Errorf("migrate: heartbeat: %w: no reply yet: %w", lockbridge.ErrUnknownOutcome, ctx.Err())
	}
}

// want is the phase a follower running cur moves to when it reads target:
// one phase towards it, so that every lock it holds or takes stays in a
// phase next to the fleet's. A follower that runs nothing yet, or that
// returns — its phase lease had lapsed, so it took no lock since, and no
// lock it holds, nor an acquire in flight, has lease left — starts afresh at target, as a
// new one does: its old phase may be long gone from the registry, and a
// step from there could land beside holders the controller never saw it
// among.
func want(cur, target Phase, returning bool) Phase {
	switch {
	case cur == 0 || returning:
		return target
	case target > cur:
		return cur + 1
	case target < cur:
		return cur - 1
	}
	return cur
}

// move runs a.want from now: the announcing reading a showed it in the
// registry and still wanted it. The lease runs from a's send.
func (f *follower) move(a read) {
	f.mu.Lock()
	if f.closed || f.current != a.ran {
		f.mu.Unlock()
		return
	}
	from := a.ran
	f.current = a.want
	f.until, f.maxTTL = a.start.Add(f.lease), a.maxTTL
	f.mu.Unlock()
	ctx := context.Background()
	f.tel.Phase(ctx, f.s.k.NS, f.id, int64(a.want), a.want.String())
	f.tel.Log().Info("lockbridge: migrate: phase moved", "lockbridge.migrate.namespace", f.s.k.NS,
		"lockbridge.migrate.client.id", f.id,
		"lockbridge.migrate.phase.from", phaseOrNone(from), "lockbridge.migrate.phase", a.want.String())
	if from != 0 && f.onStep != nil {
		f.onStep(a.want)
	}
}

// judge decides, under mu, the phase to move towards, or why not to trust
// what was read.
func (f *follower) judge(r syncReply) (Phase, error) {
	if f.fixed != 0 {
		return f.fixed, nil
	}
	ns := f.s.k.NS
	refuse := func(why PhaseReason, remedy string, cause error) (Phase, error) {
		return 0, &PhaseUnknownError{Namespace: ns, Reason: why, Last: f.current, Remedy: remedy, Cause: cause}
	}
	if r.HasNS && (r.Instance < 0 || r.Gen < 0) {
		return refuse(ReasonUnreadable, migrateproto.RemedyRepair(ns),
			fmt.Errorf("the namespace hash %s has an unreadable init or gen", f.s.k.Meta))
	}
	if r.Phase == "" {
		if f.ran || f.instance != 0 || r.HasNS {
			return refuse(ReasonLost, migrateproto.RemedyRepair(ns), nil)
		}
		return refuse(ReasonUninitialized, migrateproto.RemedyInit(ns), nil)
	}
	p, err := phaseName(r.Phase)
	if err != nil {
		return refuse(ReasonUnreadable, migrateproto.RemedyRepair(ns), fmt.Errorf("the phase key holds %q", r.Phase))
	}
	if f.instance != 0 && (!r.HasNS || r.Instance != f.instance) {
		return refuse(ReasonWentBack, migrateproto.RemedyRepair(ns),
			fmt.Errorf("the namespace is not the instance %d this locker read", f.instance))
	}
	if r.HasNS && r.Gen < f.gen {
		return refuse(ReasonWentBack, migrateproto.RemedyRepair(ns), fmt.Errorf("generation %d is older than %d, read before",
			r.Gen, f.gen))
	}
	if r.HasNS {
		f.instance, f.gen = r.Instance, max(f.gen, r.Gen)
	}
	return p, nil
}

// current returns the phase run now (0 before the first good reading).
func (f *follower) currentPhase() Phase {
	f.mu.Lock()
	defer f.mu.Unlock()
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
			if s, err := f.s.c.Subscribe(sctx, f.s.k.Shard(f.shard)); err == nil {
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
			if f.quiet(sub) {
				continue
			}
		case _, ok := <-notices:
			if !ok {
				notices = nil
			}
		}
		f.refresh(ctx)
	}
}

// quiet reports whether a tick may pass without a reading: the follower
// hears the notices (a live subscription), its last reading was good, and
// the next tick still comes at least two intervals before its phase lease
// lapses. Without notices, or after a failure, it reads at every tick. A
// fixed-phase follower, which reads no phase, needs no notices.
func (f *follower) quiet(sub driver.Subscription) bool {
	if f.fixed == 0 && (sub == nil || sub.Err() != nil) {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.lastErr != nil || f.refusal != nil || f.lastGood.IsZero() {
		return false
	}
	return time.Since(f.lastGood)+f.interval <= f.lease-2*f.interval
}

// refresh is one reading of the loop. A failure is kept (lastErr, or the
// refusal) and reported by the lock calls that it makes refuse: with the
// lease running the Locker goes on in its phase meanwhile.
func (f *follower) refresh(ctx context.Context) {
	rctx, cancel := context.WithTimeout(ctx, f.interval)
	defer cancel()
	if err := f.sync(rctx, 0); err != nil && ctx.Err() == nil {
		// The lock calls report it too, once it makes them refuse.
		f.tel.Log().Warn("lockbridge: migrate: phase reading and heartbeat failed", "lockbridge.migrate.namespace", f.s.k.NS,
			"lockbridge.migrate.client.id", f.id, "error", err)
	}
}

// phaseOrNone names p, or "none" before the first reading.
func phaseOrNone(p Phase) string {
	if p == 0 {
		return "none"
	}
	return p.String()
}

// close stops the loop and removes the registry entry — or, while locks
// it holds live on, leaves it reporting them until their leases end; or,
// after a heartbeat that got no reply, leaves it dead: written once more
// with a newer seq and a hold of 1 ms, so that heartbeat, landing late,
// writes nothing over it (heartbeat.lua refuses an older seq), where after
// a removal it would register the closed locker again for its whole hold.
// The controller's prune removes it.
func (f *follower) close(ctx context.Context) error {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return nil
	}
	f.closed = true
	stop, done := f.stop, f.done
	f.mu.Unlock()
	if stop != nil {
		close(stop)
		<-done
	}
	f.syncMu.Lock() // no reading in flight re-writes the entry after the leave
	defer f.syncMu.Unlock()
	if err := f.landed(ctx); err != nil {
		return err
	}
	f.mu.Lock()
	sent, unanswered := f.sent, f.unanswered
	e := f.entryLocked(0)
	f.mu.Unlock()
	if !sent {
		return nil
	}
	if f.held != nil {
		if h := f.held(); h.oldest != 0 {
			// Locks it holds (or acquires of unknown outcome) live on to the
			// end of their lease: the entry stays, reporting them, until then
			// — leaving at once would let the controller step past them.
			// The extra second covers the last unit of a legacy expiry in
			// seconds.
			withHeld(&e, h)
			_, err := f.s.heartbeat(ctx, e, max(h.left, 0)+time.Second, 0)
			return err
		}
	}
	if unanswered {
		_, err := f.s.heartbeat(ctx, e, time.Millisecond, 0)
		return err
	}
	return f.s.leave(ctx, f.id)
}

// landed waits for the heartbeats still on their way (see heartbeat), or
// for ctx to end: the entry then stays until its hold runs out.
func (f *follower) landed(ctx context.Context) error {
	ch := make(chan struct{})
	go func() { f.beats.Wait(); close(ch) }()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("migrate: close: a heartbeat is still on its way, so the registry entry stays until its "+
			"hold runs out: %w", ctx.Err())
	}
}

// entryLocked is the registry entry for the phase run now, announcing next
// when it is not 0, with the next sequence number: a heartbeat held up in
// the network that lands after a newer one changes nothing. f.mu is held.
func (f *follower) entryLocked(next Phase) migrateproto.Entry {
	f.seq++
	e := migrateproto.Entry{V: migrateproto.Version, ID: f.id, Phase: PhaseLegacy.String(), Host: f.host, PID: f.pid,
		Instance: f.instance, Gen: f.gen, Seq: f.seq}
	switch {
	case f.fixed != 0:
		e.Phase = f.fixed.String()
	case f.current != 0:
		e.Phase = f.current.String()
	}
	if next != 0 && next.String() != e.Phase {
		e.Next = next.String()
	}
	return e
}

// withHeld adds what h reports to e.
func withHeld(e *migrateproto.Entry, h heldReport) {
	if h.oldest == 0 {
		return
	}
	left := h.left.Milliseconds()
	if left < 0 {
		left = 0
	}
	e.HeldOldest, e.HeldNewest, e.HeldMS = h.oldest.String(), h.newest.String(), &left
}
