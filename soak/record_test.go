package soak

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lockbridge/lockbridge/driver"
)

// The recorder wraps each worker's driver.Client and logs, on the common
// clock, what the classification of an overlap needs to know about the
// legacy key, which the lockers do not expose: every legacy value sent to
// Redis (by whom, and whether a reply confirmed it), every deletion of a
// legacy key, and how the worker's last acquire got in (into an absent key,
// or by taking over which value).

// entryKind is how an acquire got in.
type entryKind int

const (
	entryUnknown  entryKind = iota
	entryFree               // the legacy key was absent (SETNX, or a script's free state)
	entryTakeover           // an expired legacy value was replaced
	entryModern             // a modern-key lock; no legacy value involved
)

func (k entryKind) String() string {
	switch k {
	case entryFree:
		return "free"
	case entryTakeover:
		return "takeover"
	case entryModern:
		return "modern"
	}
	return "unknown"
}

// entry is how the worker's last acquire attempt got in.
type entry struct {
	kind  entryKind
	value string        // the value taken over (entryTakeover)
	sent  time.Duration // when the deciding command was sent
	done  time.Duration // when its reply came
	// wrote is what the attempt's commands may have written: server key →
	// value (a legacy value, a modern token). The failover and eviction
	// classes look for these on the servers.
	wrote map[string]string
}

// write is one legacy value sent to a key.
type write struct {
	worker *worker
	value  string
	at     time.Duration // sent
	done   time.Duration // its reply came (or the call failed)
	// loser marks a GETSET that lost (its value overwrote a live lock).
	loser bool
	// free marks a write known to have gone into an absent key (a SETNX,
	// or the legacy script's free state): it replaced nobody's value.
	free bool
}

// deletion is one command that may have deleted a legacy key: DEL, or a
// release script (whose reply says whether it deleted).
type deletion struct {
	worker     *worker
	sent, done time.Duration
	how        string // "DEL" or the script name
	deleted    bool   // a reply said it deleted (or no reply came)
}

// keyLog is the legacy-key history of one lock name.
type keyLog struct {
	mu      sync.Mutex
	writes  []write          // in the order done
	byValue map[string][]int // indexes into writes
	deletes []deletion       // in the order done, likewise
}

// slack bounds how far out of order two log entries can be appended, and
// span how long a command can take (its timeout, plus the slack).
const (
	slack = time.Second
	span  = opTimeout + slack
)

func (l *keyLog) addWrite(w write) {
	l.mu.Lock()
	if l.byValue == nil {
		l.byValue = map[string][]int{}
	}
	l.byValue[w.value] = append(l.byValue[w.value], len(l.writes))
	l.writes = append(l.writes, w)
	l.mu.Unlock()
}

// writesFrom returns an index at or before that of the first write sent
// at or after t (a write is logged when its reply comes, so the log is in
// the order sent give or take a command's span).
func (l *keyLog) writesFrom(t time.Duration) int {
	return sort.Search(len(l.writes), func(i int) bool { return l.writes[i].at >= t-span })
}

func (l *keyLog) addDelete(d deletion) {
	l.mu.Lock()
	l.deletes = append(l.deletes, d)
	l.mu.Unlock()
}

// writesIn returns the writes sent in [from, to].
func (l *keyLog) writesIn(from, to time.Duration) []write {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []write
	for _, w := range l.writes[l.writesFrom(from):] {
		if w.at > to+span {
			break
		}
		if w.at >= from && w.at <= to {
			out = append(out, w)
		}
	}
	return out
}

// writers returns the writes of value sent at or before t (legacy values
// are timestamps: two clients can write the same one).
func (l *keyLog) writers(value string, t time.Duration) []write {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []write
	for _, i := range l.byValue[value] {
		if w := l.writes[i]; w.at <= t {
			out = append(out, w)
		}
	}
	return out
}

// losersIn returns the losing GETSETs whose run may fall in [from, to].
func (l *keyLog) losersIn(from, to time.Duration) []write {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []write
	for _, w := range l.writes[l.writesFrom(from-span):] {
		if w.at > to+span {
			break
		}
		if w.loser && w.at <= to && w.done >= from {
			out = append(out, w)
		}
	}
	return out
}

// deletesIn returns the deletions whose run may fall in [from, to] that
// deleted (or may have).
func (l *keyLog) deletesIn(from, to time.Duration) []deletion {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []deletion
	i := sort.Search(len(l.deletes), func(i int) bool { return l.deletes[i].done >= from-slack })
	for _, d := range l.deletes[i:] {
		if d.done > to+span {
			break
		}
		if d.deleted && d.sent <= to && d.done >= from {
			out = append(out, d)
		}
	}
	return out
}

// recorder is a driver.Client that logs legacy-key traffic for one worker.
type recorder struct {
	driver.Client
	w *worker

	mu    sync.Mutex
	last  entry
	wrote map[string]string // this attempt's writes, so far
}

// addWrote notes that this attempt may have written value to key.
func (r *recorder) addWrote(key, value string) {
	r.mu.Lock()
	if r.wrote == nil {
		r.wrote = map[string]string{}
	}
	r.wrote[key] = value
	r.mu.Unlock()
}

func (r *recorder) setEntry(e entry) {
	r.mu.Lock()
	r.last = e
	r.mu.Unlock()
}

// lastEntry returns how the last acquire attempt got in, and forgets it.
func (r *recorder) lastEntry() entry {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.last
	e.wrote = r.wrote
	r.last, r.wrote = entry{}, nil
	return e
}

func (r *recorder) now() time.Duration { return r.w.h.now() }

func (r *recorder) log(key string) *keyLog { return r.w.h.keyLog(key) }

func (r *recorder) SetNX(ctx context.Context, key, value string) (bool, error) {
	at := r.now()
	ok, err := r.Client.SetNX(ctx, key, value)
	if ok || err != nil { // it wrote, or may have
		r.addWrote(key, value)
		r.log(key).addWrite(write{worker: r.w, value: value, at: at, done: r.now(), free: true})
	}
	if err == nil && ok {
		r.setEntry(entry{kind: entryFree, sent: at, done: r.now()})
	}
	return ok, err
}

func (r *recorder) GetSet(ctx context.Context, key, value string) (string, bool, error) {
	at := r.now()
	now := r.w.clock().UnixMilli()
	old, ok, err := r.Client.GetSet(ctx, key, value)
	r.addWrote(key, value)
	// A loser's value overwrote a live one (the Java flaw); an unanswered
	// GETSET may have.
	r.log(key).addWrite(write{worker: r.w, value: value, at: at, done: r.now(),
		loser: err != nil || (ok && mustInt(old) >= now), free: err == nil && !ok})
	if err == nil {
		if ok {
			r.setEntry(entry{kind: entryTakeover, value: old, sent: at, done: r.now()})
		} else {
			r.setEntry(entry{kind: entryFree, sent: at, done: r.now()}) // our GETSET created the key
		}
	}
	return old, ok, err
}

func (r *recorder) SetNXPX(ctx context.Context, key, value string, ttl time.Duration) (bool, error) {
	ok, err := r.Client.SetNXPX(ctx, key, value, ttl)
	if ok || err != nil {
		r.addWrote(key, value)
	}
	return ok, err
}

func (r *recorder) Del(ctx context.Context, key string) (bool, error) {
	d := deletion{worker: r.w, sent: r.now(), how: "DEL"}
	ok, err := r.Client.Del(ctx, key)
	d.done = r.now()
	d.deleted = ok || err != nil
	r.log(key).addDelete(d)
	return ok, err
}

func (r *recorder) Eval(ctx context.Context, s *driver.Script, keys []string, args ...any) (any, error) {
	name := s.Name()
	at := r.now()
	switch name {
	case "migrate/scripts/acquire.lua":
		// The reply does not say whether the legacy key was free or
		// expired: the classification considers both.
		reply, err := r.Client.Eval(ctx, s, keys, args...)
		if err != nil || code(reply, 0) == 1 {
			if str(args[0]) == "1" {
				r.addWrote(keys[0], str(args[1]))
			}
			r.addWrote(keys[1], str(args[4]))
		}
		if str(args[0]) == "1" && (err != nil || code(reply, 0) == 1) {
			r.log(keys[0]).addWrite(write{worker: r.w, value: str(args[1]), at: at, done: r.now()})
		}
		if err != nil || code(reply, 0) == 1 {
			// Without a reply the locker may still learn the lock is ours
			// (it reads its token back): the script ran in [at, now].
			r.setEntry(entry{kind: entryUnknown, sent: at, done: r.now()})
		}
		return reply, err
	case "modern/acquire.lua":
		reply, err := r.Client.Eval(ctx, s, keys, args...)
		if err != nil || code(reply, 0) == 1 {
			r.addWrote(keys[0], str(args[0]))
		}
		r.setEntry(entry{kind: entryModern, sent: at, done: r.now()})
		return reply, err
	}
	reply, err := r.Client.Eval(ctx, s, keys, args...)
	done := r.now()
	switch name {
	case "legacy/scripts/acquire.lua":
		if c := code(reply, 0); err != nil || c == 1 || c == 2 {
			r.addWrote(keys[0], str(args[0]))
			r.log(keys[0]).addWrite(write{worker: r.w, value: str(args[0]), at: at, done: done, free: err == nil && code(reply,
				0) == 1})
		}
		if err == nil {
			switch code(reply, 0) {
			case 1:
				r.setEntry(entry{kind: entryFree, sent: at, done: done})
			case 2:
				r.setEntry(entry{kind: entryTakeover, value: str(elem(reply, 1)), sent: at, done: done})
			}
		}
	case "legacy/scripts/release.lua":
		r.log(keys[0]).addDelete(deletion{worker: r.w, sent: at, done: done, how: name,
			deleted: err != nil || code(reply, 0) == 1 || code(reply, 0) == -2})
	case "migrate/scripts/release.lua":
		if str(args[0]) == "1" {
			r.log(keys[0]).addDelete(deletion{worker: r.w, sent: at, done: done, how: name,
				deleted: err != nil || code(reply, 1) == 1 || code(reply, 1) == -2})
		}
	}
	return reply, err
}

func str(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []byte:
		return string(x)
	case nil:
		return ""
	}
	return fmt.Sprint(v)
}

func elem(reply any, i int) any {
	a, ok := reply.([]any)
	if !ok || i >= len(a) {
		return nil
	}
	return a[i]
}

// code returns the integer at reply[i] (a scalar reply is its own
// element 0), or -99.
func code(reply any, i int) int64 {
	v := elem(reply, i)
	if _, isArray := reply.([]any); !isArray && i == 0 {
		v = reply
	}
	switch x := v.(type) {
	case int64:
		return x
	case string:
		n, err := strconv.ParseInt(x, 10, 64)
		if err == nil {
			return n
		}
	}
	return -99
}

// around renders the key's log within [from, to], for a trace.
func (l *keyLog) around(from, to time.Duration) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	type line struct {
		at   time.Duration
		text string
	}
	var ls []line
	for _, w := range l.writes {
		if w.at >= from && w.at <= to {
			ls = append(ls, line{w.at, fmt.Sprintf("      %.3fs write %s by %s (offset %v)%s", w.at.Seconds(), w.value,
				w.worker.name, w.worker.offset, map[bool]string{true: " (losing GETSET)"}[w.loser])})
		}
	}
	for _, d := range l.deletes {
		if d.done >= from && d.sent <= to {
			ls = append(ls, line{d.sent, fmt.Sprintf("      %.3fs..%.3fs %s by %s deleted=%v", d.sent.Seconds(),
				d.done.Seconds(), d.how, d.worker.name, d.deleted)})
		}
	}
	sort.Slice(ls, func(i, j int) bool { return ls[i].at < ls[j].at })
	var b strings.Builder
	for _, x := range ls {
		b.WriteString(x.text)
		b.WriteByte('\n')
	}
	return b.String()
}
