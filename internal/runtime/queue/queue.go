package queue

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lockbridge/lockbridge"
)

// ErrBehind is what an attempt of a waiter that is not at the head of its
// line returns instead of trying: the lock is wanted by an earlier waiter of
// the same Locker. It wraps lockbridge.ErrNotObtained, so a waiting loop
// waits and tries again as after a failed attempt; unlike one it is not a
// contended attempt on the server.
var ErrBehind = fmt.Errorf("%w: waiting behind an earlier Lock call of this Locker", lockbridge.ErrNotObtained)

// Queue holds the lines of one Locker, one per key with waiters. The zero
// value is ready to use. Its methods are safe for concurrent use.
type Queue struct {
	mu    sync.Mutex
	lines map[string]*line
	n     atomic.Int64 // len(lines), read without mu by Wake
}

type line struct {
	head, tail *Ticket
	keep       func() // released when the line ends
	// wakes counts the Wakes of the line's key; held and heldAt say that
	// a head left the line holding the lock, at that count.
	wakes     uint64
	held      bool
	heldAt    uint64
	heldUntil time.Time // the holder's lease end, by this process's clock
}

// Ticket is one waiter's place in its key's line.
type Ticket struct {
	q          *Queue
	key        string
	wake       chan<- struct{}
	ln         *line // nil once left
	prev, next *Ticket
	head       atomic.Bool
}

// Join puts a waiter at the end of key's line and returns its ticket. wake
// (buffer of one) receives a non-blocking send when the ticket becomes the
// head of the line (not when it is the head at once) and, while it is the
// head, at every Wake of key. Call Leave exactly once when done waiting.
func (q *Queue) Join(key string, wake chan<- struct{}) *Ticket {
	t := &Ticket{q: q, key: key, wake: wake}
	q.mu.Lock()
	defer q.mu.Unlock()
	ln := q.lines[key]
	if ln == nil {
		if q.lines == nil {
			q.lines = map[string]*line{}
		}
		ln = &line{}
		q.lines[key] = ln
		q.n.Add(1)
	}
	t.ln = ln
	if ln.tail == nil {
		ln.head, ln.tail = t, t
		t.head.Store(true)
		return t
	}
	t.prev, ln.tail.next = ln.tail, t
	ln.tail = t
	return t
}

// Head reports whether t is at the head of its line: its waiter may
// attempt. False once t has left.
func (t *Ticket) Head() bool { return t.head.Load() }

// Leave takes t out of its line. When t was the head, the next ticket
// becomes the head and is woken; when t was the last, the line ends and
// what Keep attached to it is released. Further calls do nothing.
func (t *Ticket) Leave() { t.leave(false, time.Time{}) }

// LeaveHolding is Leave for a waiter that got the lock, with a lease that
// ends at until: until the next Wake of the key (its release, or its loss)
// or until then, the new head sees HolderAhead.
func (t *Ticket) LeaveHolding(until time.Time) { t.leave(true, until) }

// HolderAhead reports whether the waiter ahead of t left the line holding
// the lock, with no Wake of the key since and its lease not yet over: an
// attempt now would find the lock taken, so t should wait for the Wake —
// at most left, when the lease ends (a holder that never releases).
func (t *Ticket) HolderAhead() (left time.Duration, ok bool) {
	t.q.mu.Lock()
	defer t.q.mu.Unlock()
	ln := t.ln
	if ln == nil || !ln.held || ln.heldAt != ln.wakes {
		return 0, false
	}
	left = time.Until(ln.heldUntil)
	return left, left > 0
}

func (t *Ticket) leave(holding bool, until time.Time) {
	q := t.q
	q.mu.Lock()
	ln := t.ln
	if ln == nil {
		q.mu.Unlock()
		return
	}
	t.ln = nil
	wasHead := t.head.Swap(false)
	if holding && wasHead {
		ln.held, ln.heldAt, ln.heldUntil = true, ln.wakes, until
	}
	if t.prev != nil {
		t.prev.next = t.next
	} else {
		ln.head = t.next
	}
	if t.next != nil {
		t.next.prev = t.prev
	} else {
		ln.tail = t.prev
	}
	t.prev, t.next = nil, nil
	var drop func()
	switch {
	case ln.head == nil:
		delete(q.lines, t.key)
		q.n.Add(-1)
		drop, ln.keep = ln.keep, nil
	case wasHead:
		ln.head.head.Store(true)
		poke(ln.head.wake)
	}
	q.mu.Unlock()
	if drop != nil {
		drop()
	}
}

// Keep attaches release to t's line, to be called when the line ends, and
// calls what was attached before (now replaced) at once. When t has left
// already, release is called at once. release may be nil.
func (t *Ticket) Keep(release func()) {
	q := t.q
	q.mu.Lock()
	ln := t.ln
	var old func()
	if ln == nil {
		old = release
	} else {
		old, ln.keep = ln.keep, release
	}
	q.mu.Unlock()
	if old != nil {
		old()
	}
}

// Wake sends on the wake channel of the head of key's line, if key has
// one: a lock of the Locker on key was released, the head may have it.
// It costs an atomic load when the Locker has no waiter at all.
func (q *Queue) Wake(key string) {
	if q.n.Load() == 0 {
		return
	}
	q.mu.Lock()
	if ln := q.lines[key]; ln != nil {
		ln.wakes++
		poke(ln.head.wake)
	}
	q.mu.Unlock()
}

// Lines returns the number of keys with waiters. For tests and diagnostics.
func (q *Queue) Lines() int { return int(q.n.Load()) }

// Len returns the number of waiters in key's line. For tests and
// diagnostics.
func (q *Queue) Len(key string) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	n := 0
	if ln := q.lines[key]; ln != nil {
		for t := ln.head; t != nil; t = t.next {
			n++
		}
	}
	return n
}

// poke makes a non-blocking send on wake (nil: none).
func poke(wake chan<- struct{}) {
	if wake == nil {
		return
	}
	select {
	case wake <- struct{}{}:
	default:
	}
}
