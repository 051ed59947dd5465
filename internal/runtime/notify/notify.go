package notify

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/driver/keyslot"
	"github.com/lockbridge/lockbridge/internal/runtime/telemetry"
)

// Suffix is what Channel appends to a key (inside the hash-tag form).
const Suffix = ":released"

// Payload is what release scripts publish. Waiters ignore it.
const Payload = "released"

// Channel returns the release channel of key: key+":released" when key has a
// hash tag, "{"+key+"}:released" otherwise, so the channel hashes to the
// key's slot and a cluster release script may SPUBLISH it with the channel in
// KEYS. ok is false when no such name hashes to the key's slot (a key with a
// stray '}'): such a key has no release channel, its releases publish
// nothing and its waiters poll.
func Channel(key string) (channel string, ok bool) {
	return keyslot.Companion(key, Suffix)
}

// PublishCommand is the command a release script publishes with on c:
// "SPUBLISH" (sharded pub/sub, Redis >= 7) in a Redis Cluster, "PUBLISH"
// otherwise — matching how c.Subscribe listens.
func PublishCommand(c driver.Client) string {
	if c.Cluster() {
		return "SPUBLISH"
	}
	return "PUBLISH"
}

// ErrClosed is returned by Wait after Close.
var ErrClosed = errors.New("notify: hub closed")

const (
	// DefaultRetryAfter is RetryAfter's default.
	DefaultRetryAfter = time.Second
	// DefaultSubscribeTimeout bounds how long Wait waits for the server to
	// confirm a subscription (it never waits past its own context either);
	// past it the waiter polls.
	DefaultSubscribeTimeout = 2 * time.Second
	// MaxLingering bounds how many channels may linger at once (see
	// Linger); a channel whose last waiter leaves while that many linger is
	// unsubscribed at once.
	MaxLingering = 1024
)

// Option configures a Hub.
type Option func(*Hub)

// RetryAfter sets how long after a failed or lost subscription the Hub
// waits before subscribing again; meanwhile waiters poll. Default
// DefaultRetryAfter (1 s). A value <= 0 keeps the default.
func RetryAfter(d time.Duration) Option {
	return func(h *Hub) {
		if d > 0 {
			h.retryAfter = d
		}
	}
}

// Linger keeps a channel subscribed for d after its last waiter left, and
// the subscription open while a channel lingers, so that the next Wait on it
// within d costs no round trip and no connection (a process that locks the
// same contended key again and again waits on it again within
// milliseconds). The Hub then runs the subscription's reader goroutine, and
// a timer that ends the linger, until d after the last waiter left, or until
// Close. At most MaxLingering channels linger at once. Default 0: a channel
// is unsubscribed as its last waiter leaves, and the subscription closed
// with the last channel. A value < 0 counts as 0.
func Linger(d time.Duration) Option {
	return func(h *Hub) { h.linger = max(d, 0) }
}

// Logger sets where the Hub logs a failed or lost subscription (at warn
// level: waiters poll meanwhile). Default: nil, which discards.
func Logger(l *slog.Logger) Option {
	return func(h *Hub) {
		if l != nil {
			h.log = l
		}
	}
}

// Hub shares one subscription among the waiters of one Locker. The zero
// value is not usable: build one with New. Its methods are safe for
// concurrent use.
type Hub struct {
	c          driver.Client
	retryAfter time.Duration
	timeout    time.Duration
	linger     time.Duration
	log        *slog.Logger

	// subMu serialises everything that talks to the server about the
	// subscription: opening, subscribing, unsubscribing, closing. Wait's fast
	// path (the channel already confirmed) does not take it.
	subMu sync.Mutex

	mu       sync.Mutex
	sub      driver.Subscription // nil while none is open
	reader   chan struct{}       // closed when sub's reader goroutine returned
	chans    map[string]*channel // channels with waiters, and lingering ones
	idle     map[string]*channel // the lingering channels: no waiter
	retryAt  time.Time           // no new subscription before this
	lastErr  error               // why the last subscription failed or was lost
	isClosed bool

	// The linger's timer (see sweep): sweepOn while a sweep is scheduled or
	// running; sweeps counts that chain, for Close to wait for.
	sweepT  *time.Timer
	sweepOn bool
	sweeps  sync.WaitGroup
}

type channel struct {
	waiters   map[*waiter]struct{}
	confirmed bool      // subscribed on the current sub
	idleSince time.Time // when its last waiter left; zero while waited on
	// seen counts the events that may mean a release: notices, and a lost
	// subscription. A Mark holds its value.
	seen uint64
	// line: see SetLine; lostAt: see Lost.
	line   int
	lostAt time.Time
}

type waiter struct{ wake chan<- struct{} }

// New returns a Hub that subscribes through c.
func New(c driver.Client, opts ...Option) *Hub {
	h := &Hub{
		c:          c,
		retryAfter: DefaultRetryAfter,
		timeout:    DefaultSubscribeTimeout,
		chans:      map[string]*channel{},
		idle:       map[string]*channel{},
		log:        telemetry.Discard(),
	}
	for _, o := range opts {
		if o != nil {
			o(h)
		}
	}
	return h
}

// Wait registers wake for releases on ch and returns once the subscription
// to ch is confirmed, so no release after this point is missed. Each release
// on ch makes a non-blocking send on the wake of one of ch's waiters (and
// each loss or recovery of the subscription, after which every waiter should
// try again, on all of them): give wake a buffer of one, receive from it
// only to act on it (attempt the lock), and share it between several Wait
// calls to wait for any of their channels.
//
// release removes the registration; call it exactly when done waiting,
// whatever err is. It is never nil and is safe to call more than once. A
// non-nil err means notifications are not available now (see the package
// documentation): the waiter should poll. The registration stays in place,
// so the waiter still wakes should a later subscription succeed.
func (h *Hub) Wait(ctx context.Context, ch string, wake chan<- struct{}) (release func(), err error) {
	release, _, err = h.WaitFrom(ctx, ch, wake, Mark{})
	return release, err
}

// Mark is a point in a channel's notices, taken by Since. The zero Mark
// covers nothing.
type Mark struct {
	c    *channel
	seen uint64
}

// Covers reports whether m was taken on a subscribed channel.
func (m Mark) Covers() bool { return m.c != nil }

// Since returns a Mark of ch's notices as they stand: take it before an
// attempt, and pass it to WaitFrom after the attempt failed. It covers
// nothing unless ch is subscribed, confirmed, now (it has waiters, or
// lingers).
func (h *Hub) Since(ch string) Mark {
	h.mu.Lock()
	defer h.mu.Unlock()
	if c := h.chans[ch]; c != nil && c.confirmed && h.sub != nil {
		return Mark{c: c, seen: c.seen}
	}
	return Mark{}
}

// WaitFrom is Wait for a waiter that took m with Since before its last
// attempt. covered reports that ch has been subscribed, without a lapse,
// from m to now: then WaitFrom returns at once, and wake has been poked if a
// notice came since m, so no release after m is missed. Otherwise (covered
// false) it subscribes as Wait does, and a release between m and the
// confirmation may have gone unheard: the waiter should attempt once more
// before it sleeps.
func (h *Hub) WaitFrom(ctx context.Context, ch string, wake chan<- struct{}, m Mark) (release func(), covered bool,
	err error) {
	w := &waiter{wake: wake}
	h.mu.Lock()
	if h.isClosed {
		h.mu.Unlock()
		return func() {}, false, ErrClosed
	}
	c := h.chans[ch]
	switch {
	case c == nil:
		c = &channel{waiters: map[*waiter]struct{}{}}
		h.chans[ch] = c
	case len(c.waiters) == 0:
		delete(h.idle, ch) // lingering: waited on again
		c.idleSince = time.Time{}
	}
	c.waiters[w] = struct{}{}
	ready := c.confirmed && h.sub != nil
	// The entry m was taken on is still ch's, confirmed then and now: any
	// loss in between counted in seen.
	covered = ready && m.c == c
	if covered && c.seen != m.seen {
		poke(w)
	}
	h.mu.Unlock()
	release = func() { h.leave(ch, w) }
	if ready {
		return release, covered, nil
	}
	return release, false, h.subscribe(ctx, ch, w)
}

// subscribe makes sure ch is subscribed on an open subscription, opening one
// (with every channel that has waiters) when none is.
func (h *Hub) subscribe(ctx context.Context, ch string, self *waiter) error {
	h.subMu.Lock()
	defer h.subMu.Unlock()
	h.mu.Lock()
	if h.isClosed {
		h.mu.Unlock()
		return ErrClosed
	}
	c := h.chans[ch]
	if c == nil || (c.confirmed && h.sub != nil) {
		h.mu.Unlock()
		return nil // left already, or another waiter subscribed it meanwhile
	}
	sub := h.sub
	if sub == nil {
		if wait := time.Until(h.retryAt); wait > 0 {
			err := h.lastErr
			h.mu.Unlock()
			return fmt.Errorf("notify: not subscribing for another %v after a failure: %w", wait.Round(time.Millisecond), err)
		}
		names := make([]string, 0, len(h.chans))
		for n := range h.chans {
			names = append(names, n)
		}
		h.mu.Unlock()
		return h.open(ctx, names, self)
	}
	h.mu.Unlock()

	sctx, cancel := context.WithTimeout(ctx, h.timeout)
	err := sub.Subscribe(sctx, ch)
	cancel()
	if err != nil {
		h.failed(ctx, err)
		return fmt.Errorf("notify: subscribe %q: %w", ch, err)
	}
	h.mu.Lock()
	if c := h.chans[ch]; c != nil && h.sub == sub {
		c.confirmed = true
	}
	h.mu.Unlock()
	return nil
}

// open opens a subscription to names and starts its reader. Called with
// subMu held.
func (h *Hub) open(ctx context.Context, names []string, self *waiter) error {
	sctx, cancel := context.WithTimeout(ctx, h.timeout)
	sub, err := h.c.Subscribe(sctx, names...)
	cancel()
	if err != nil {
		h.failed(ctx, err)
		return fmt.Errorf("notify: subscribe: %w", err)
	}
	reader := make(chan struct{})
	h.mu.Lock()
	if h.isClosed {
		h.mu.Unlock()
		_ = sub.Close()
		return ErrClosed
	}
	h.sub, h.reader = sub, reader
	for _, n := range names {
		if c := h.chans[n]; c != nil {
			c.confirmed = true
			// Waiters registered while no subscription was open may have
			// missed a release: let them try again now.
			for w := range c.waiters {
				if w != self {
					poke(w)
				}
			}
		}
	}
	h.mu.Unlock()
	go h.read(sub, reader)
	return nil
}

// failed records a failure to subscribe, unless it was the caller's context
// that ended: then the server is not to blame.
func (h *Hub) failed(ctx context.Context, err error) {
	if ctx.Err() != nil {
		return
	}
	h.mu.Lock()
	h.lastErr, h.retryAt = err, time.Now().Add(h.retryAfter)
	h.mu.Unlock()
	h.log.Warn("lockbridge: release notifications: subscribing failed; waiters poll until it succeeds", "retry_after",
		h.retryAfter, "error", err)
}

// read dispatches sub's messages until it ends. When it ends on its own (the
// connection was lost), it forgets sub and wakes every waiter.
func (h *Hub) read(sub driver.Subscription, reader chan struct{}) {
	defer close(reader)
	for m := range sub.Messages() {
		h.mu.Lock()
		if c := h.chans[m.Channel]; c != nil {
			c.seen++
			c.wakeOne(nil)
		}
		h.mu.Unlock()
	}
	h.mu.Lock()
	if h.sub != sub {
		h.mu.Unlock()
		return // closed by leave or Close
	}
	h.sub, h.reader = nil, nil
	h.lastErr = sub.Err()
	if h.lastErr == nil {
		h.lastErr = errors.New("notify: subscription ended")
	}
	h.retryAt = time.Now().Add(h.retryAfter)
	h.log.Warn("lockbridge: release notifications: subscription lost; waiters poll until it is back", "retry_after",
		h.retryAfter, "error", h.lastErr)
	for name, c := range h.chans {
		c.confirmed = false
		c.seen++
		if len(c.waiters) == 0 {
			// Lingering: nobody to resubscribe it for.
			delete(h.chans, name)
			delete(h.idle, name)
		}
		for w := range c.waiters {
			poke(w)
		}
	}
	h.mu.Unlock()
	_ = sub.Close()
}

// leave removes w from ch; the last waiter of a channel unsubscribes it
// (after the linger, if any), the last channel closes the subscription.
func (h *Hub) leave(ch string, w *waiter) {
	h.mu.Lock()
	c := h.chans[ch]
	if c == nil {
		h.mu.Unlock()
		return
	}
	if _, ok := c.waiters[w]; !ok {
		h.mu.Unlock()
		return
	}
	delete(c.waiters, w)
	if len(c.waiters) > 0 {
		if len(w.wake) > 0 {
			// w leaves with a wake it may not have acted on: pass it on.
			c.wakeOne(w)
		}
		h.mu.Unlock()
		return
	}
	if h.linger > 0 && c.confirmed && h.sub != nil && !h.isClosed && len(h.idle) < MaxLingering {
		c.idleSince = time.Now()
		h.idle[ch] = c
		h.scheduleSweep()
		h.mu.Unlock()
		return
	}
	delete(h.chans, ch)
	h.mu.Unlock()
	h.drop([]string{ch})
}

// drop unsubscribes chs, which have no entry any more, or closes the
// subscription when no channel is left.
func (h *Hub) drop(chs []string) {
	h.subMu.Lock()
	defer h.subMu.Unlock()
	h.mu.Lock()
	sub := h.sub
	gone := chs[:0:0]
	for _, ch := range chs {
		if h.chans[ch] == nil {
			gone = append(gone, ch) // else a new waiter came for ch meanwhile
		}
	}
	if sub == nil || len(gone) == 0 {
		h.mu.Unlock()
		return
	}
	if len(h.chans) == 0 {
		reader := h.reader
		h.sub, h.reader = nil, nil
		h.mu.Unlock()
		_ = sub.Close()
		<-reader
		return
	}
	h.mu.Unlock()
	// Not waiting for the confirmation: a message still arriving for these
	// channels finds no waiter. A failure here means the connection is going:
	// the reader sees that.
	ctx, cancel := context.WithTimeout(context.Background(), h.timeout)
	_ = sub.Unsubscribe(ctx, gone...)
	cancel()
}

// scheduleSweep starts the linger's timer unless it runs. Called with mu
// held.
func (h *Hub) scheduleSweep() {
	if h.sweepOn {
		return
	}
	h.sweepOn = true
	h.sweeps.Add(1)
	if h.sweepT == nil {
		h.sweepT = time.AfterFunc(h.linger, h.sweep)
		return
	}
	h.sweepT.Reset(h.linger)
}

// sweep ends the linger of the channels idle for the linger or longer, and
// runs again for the others (no sooner than an eighth of the linger, so a
// stream of channels going idle costs few sweeps).
func (h *Hub) sweep() {
	h.mu.Lock()
	if h.isClosed {
		h.mu.Unlock()
		h.sweeps.Done() // Close found the timer fired
		return
	}
	now := time.Now()
	var gone []string
	var next time.Duration
	for name, c := range h.idle {
		if left := h.linger - now.Sub(c.idleSince); left > 0 {
			if next == 0 || left < next {
				next = left
			}
			continue
		}
		delete(h.idle, name)
		delete(h.chans, name)
		gone = append(gone, name)
	}
	if next > 0 {
		h.sweepT.Reset(max(next, h.linger/8))
	} else {
		h.sweepOn = false
	}
	h.mu.Unlock()
	if len(gone) > 0 {
		h.drop(gone)
	}
	if next == 0 {
		h.sweeps.Done()
	}
}

// Close closes the subscription, if one is open, and waits for its reader
// and the linger's timer. Waiters are woken once; later Waits return
// ErrClosed (and so poll).
func (h *Hub) Close() error {
	err := h.close()
	h.sweeps.Wait()
	return err
}

func (h *Hub) close() error {
	h.subMu.Lock()
	defer h.subMu.Unlock()
	h.mu.Lock()
	if h.isClosed {
		h.mu.Unlock()
		return nil
	}
	h.isClosed = true
	if h.sweepOn && h.sweepT.Stop() {
		h.sweepOn = false
		h.sweeps.Done()
	}
	clear(h.idle)
	sub, reader := h.sub, h.reader
	h.sub, h.reader = nil, nil
	for _, c := range h.chans {
		for w := range c.waiters {
			poke(w)
		}
	}
	h.mu.Unlock()
	if sub == nil {
		return nil
	}
	err := sub.Close()
	<-reader
	return err
}

// Subscribed reports whether a subscription is open and has confirmed ch.
// For tests and diagnostics.
func (h *Hub) Subscribed(ch string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	c := h.chans[ch]
	return h.sub != nil && c != nil && c.confirmed
}

// Heard reports whether a notice came on m's channel since m was taken,
// or its subscription lapsed; false for a Mark that covers nothing.
func (h *Hub) Heard(m Mark) bool {
	if m.c == nil {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return m.c.seen != m.seen
}

// Notices returns how many notices (and lapses of the subscription) ch
// has heard since m was taken on it; -1 when m covers nothing, or ch's entry
// is not m's any more (the linger ended in between).
func (h *Hub) Notices(ch string, m Mark) int {
	if m.c == nil {
		return -1
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.chans[ch] != m.c {
		return -1
	}
	return int(m.c.seen - m.seen)
}

// SetLine records, for ch, that a waiter of this hub heard n notices
// before it got the lock: the line it waited in, across processes. The
// line recorded grows to n at once; it shrinks, by one a call, only when
// short says the waiter found nobody ahead of it (a waiter served early by
// chance must not make the next one jump the line). It is kept while ch has
// waiters or lingers.
func (h *Hub) SetLine(ch string, n int, short bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if c := h.chans[ch]; c != nil {
		if short {
			c.line = max(n, c.line-1)
		} else {
			c.line = max(n, c.line)
		}
	}
}

// Lost records that a waiter on ch, woken by a notice, found the lock taken
// again: waiters elsewhere compete for it. It is remembered while ch has
// waiters or lingers.
func (h *Hub) Lost(ch string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if c := h.chans[ch]; c != nil {
		c.lostAt = time.Now()
	}
}

// Contended reports whether a waiter on ch lost a race (Lost) within the
// last d.
func (h *Hub) Contended(ch string, d time.Duration) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	c := h.chans[ch]
	return c != nil && !c.lostAt.IsZero() && time.Since(c.lostAt) < d
}

// Line returns what SetLine recorded for ch; 0 if nothing.
func (h *Hub) Line(ch string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	if c := h.chans[ch]; c != nil {
		return c.line
	}
	return 0
}

// Waiters returns how many waiters ch has. For tests and diagnostics.
func (h *Hub) Waiters(ch string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	if c := h.chans[ch]; c != nil {
		return len(c.waiters)
	}
	return 0
}

// Lingering returns how many channels linger: subscribed with no waiter.
// For tests and diagnostics.
func (h *Hub) Lingering() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.idle)
}

// Open reports whether a subscription is open. For tests and diagnostics.
func (h *Hub) Open() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.sub != nil
}

// wakeOne wakes one waiter of c (not skip), preferring one that has no wake
// pending: a release frees the lock for one waiter of this hub — waking all
// of them would only send them all to Redis, and all but one back to sleep.
// Waiters in other processes have hubs of their own.
func (c *channel) wakeOne(skip *waiter) {
	for w := range c.waiters {
		if w != skip && len(w.wake) == 0 {
			poke(w)
			return
		}
	}
	// Every waiter has a wake pending already: nothing to add.
}

func poke(w *waiter) {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}
