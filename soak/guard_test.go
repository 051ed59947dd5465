package soak

import (
	"fmt"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"
)

// The guard. Each hold is the interval, on the common clock, during which
// the holder surely held its lock: from the return of its acquire (the lock
// was written by then) to the earlier of the start of its release and the
// end of the lease counted from the start of the acquire call (the lease
// was written no earlier, so it was still valid) — for an auto-refresh lock,
// to the last moment its holder saw Done still open and ExpiresAt still
// ahead, the library's claim.
// Two holds of one key by different workers whose intervals intersect are
// an overlap: nothing the lock says enters into it.

// hold is one held lock.
type hold struct {
	w                     *worker
	key                   string
	acqStart, acqRet      time.Duration
	relStart, relRet, end time.Duration
	entry                 entry
	fence                 int64
	lost, paused          bool
}

func (hd *hold) String() string {
	return fmt.Sprintf("%s (offset %+v, lease %v) held [%.3fs, %.3fs] (acquire sent %.3fs, %s%s; release %.3fs..%.3fs)%s",
		hd.w.name, hd.w.offset, hd.w.lease, hd.acqRet.Seconds(), hd.end.Seconds(), hd.acqStart.Seconds(),
		hd.entry.kind, takeoverOf(hd.entry), hd.relStart.Seconds(), hd.relRet.Seconds(), pausedNote(hd))
}

func takeoverOf(e entry) string {
	if e.kind == entryTakeover {
		return " of " + e.value
	}
	return ""
}

func pausedNote(hd *hold) string {
	if hd.paused {
		return " paused"
	}
	return ""
}

// Category is an overlap's category.
type Category string

// The categories.
const (
	// GoCaused: a Go lock is involved and nothing of the Java scheme (a
	// takeover judged by a skewed clock, a literal DEL or GETSET) enabled
	// it. The goal is none.
	GoCaused Category = "a"
	// JavaScheme: an overlap the Java scheme itself allows.
	JavaScheme Category = "b"
	// DataLoss: a restart of a server without persistence lost the lock.
	DataLoss Category = "c"
	// FailoverLoss: a failover to a lagging replica lost the first
	// holder's write (the old primary had it when its writes stopped, the
	// new one did not).
	FailoverLoss Category = "d"
	// Evicted: the first holder's key was evicted (seen in the server's
	// keyspace notifications, between its set and the second holder's).
	Evicted Category = "e"
)

// Overlap is two holders of one key at once.
type Overlap struct {
	Group    string
	Key      string
	Category Category
	Cause    string
	Trace    string
}

// Figures are a soak's results.
type Figures struct {
	Seed     int64
	Duration time.Duration
	// Groups: per group, acquisitions and overlaps by category.
	Groups []GroupFigures
	// Faults injected, by kind.
	Faults map[string]int64
	// Overlaps, each with its cause and trace.
	Overlaps []Overlap
	// Causes counts overlaps by category and cause.
	Causes map[string]int64
	// Lost locks signalled (Done closed with ErrLost), by kind.
	Lost map[Kind]int64
	// FenceRegressions counts holds whose fence was not above that of
	// every earlier hold of the key released before they began (restarts
	// of a server without persistence included).
	FenceRegressions int64
	// LateDone counts auto-refresh holds whose Done was seen open after
	// ExpiresAt had passed (its timer ran late): the guard ends such a hold
	// at ExpiresAt, the holder's claim.
	LateDone int64
	// Failovers: one line each (lag, keys the new primary lacked).
	Failovers []string
	// Steps counts the eviction server's controller steps by policy family
	// and outcome (refusals by their blockers' kinds).
	Steps map[string]int64
	// Goroutines before the fleet started and after everything was closed
	// (and leaked stacks, if any).
	GoroutinesBefore, GoroutinesAfter int
	LeakedStacks                      string
	Errors                            map[string]int64
}

// GroupFigures are one group's figures.
type GroupFigures struct {
	Name                    string
	Kinds                   string
	Acquisitions            int64
	Attempts                int64
	A, B, C, D, E           int64
	Lost, NotHeld, Pauses   int64
	AcquireErrs, ReleaseErr int64
}

// Count returns the overlaps of category c.
func (f *Figures) Count(c Category) int64 {
	var n int64
	for _, o := range f.Overlaps {
		if o.Category == c {
			n++
		}
	}
	return n
}

func (h *harness) analyse() *Figures {
	f := &Figures{Faults: h.faults.snapshot(), Causes: map[string]int64{}, Lost: map[Kind]int64{},
		Errors: map[string]int64{}}
	byKey := map[string][]*hold{}
	for _, hd := range h.holds {
		byKey[hd.key] = append(byKey[hd.key], hd)
	}
	groupOf := map[string]*group{}
	for _, g := range h.groups {
		for _, k := range g.keys {
			groupOf[k] = g
		}
	}
	perGroup := map[*group]*GroupFigures{}
	for _, g := range h.groups {
		gf := &GroupFigures{Name: g.name}
		var kinds []string
		seen := map[Kind]int{}
		for _, w := range g.workers {
			seen[w.kind]++
			w.mu.Lock()
			s := w.stats
			w.mu.Unlock()
			gf.Acquisitions += s.acquired
			gf.Attempts += s.attempts
			gf.Lost += s.lost
			gf.NotHeld += s.notHeld
			gf.Pauses += s.pauses + s.stalls
			gf.AcquireErrs += s.acquireErrors
			gf.ReleaseErr += s.releaseErrors
			f.Lost[w.kind] += s.lost
			f.LateDone += s.lateDone
			f.Faults["pause"] += s.pauses
		}
		for _, w := range g.workers {
			if n, ok := seen[w.kind]; ok {
				kinds = append(kinds, fmt.Sprintf("%s×%d", w.kind, n))
				delete(seen, w.kind)
			}
		}
		gf.Kinds = strings.Join(kinds, " ")
		perGroup[g] = gf
	}
	for key, hs := range byKey {
		g := groupOf[key]
		sort.Slice(hs, func(i, j int) bool { return hs[i].acqRet < hs[j].acqRet })
		for i, x := range hs {
			for _, y := range hs[i+1:] {
				if y.acqRet >= x.end {
					break // sorted by start: no later hold starts before x ends
				}
				if x.w == y.w || y.end <= y.acqRet || x.end <= x.acqRet {
					continue
				}
				cat, cause := h.classify(key, x, y, hs)
				if cat == GoCaused && y.entry.sent <= x.acqRet {
					// Both acquires were on the wire at once: the server may
					// have run y's first.
					if c2, cause2 := h.classify(key, y, x, hs); c2 != GoCaused {
						cat, cause = c2, cause2
					}
				}
				o := Overlap{Group: g.name, Key: key, Category: cat, Cause: cause,
					Trace: fmt.Sprintf("%s\n    then %s", x, y)}
				if cat == GoCaused {
					o.Trace += "\n" + h.keyLog(key).around(x.acqStart-time.Second, y.acqRet)
					o.Trace += h.ev.trace(x, y)
				}
				f.Overlaps = append(f.Overlaps, o)
				f.Causes[string(cat)+": "+cause]++
				gf := perGroup[g]
				switch cat {
				case GoCaused:
					gf.A++
				case JavaScheme:
					gf.B++
				case DataLoss:
					gf.C++
				case FailoverLoss:
					gf.D++
				case Evicted:
					gf.E++
				}
			}
		}
		// Fences: a hold must carry a fence above every hold of the key
		// that was released before it began.
		for _, b := range hs {
			if b.fence == 0 {
				continue
			}
			for _, a := range hs {
				if a.fence != 0 && a.relRet < b.acqStart && a.fence >= b.fence {
					f.FenceRegressions++
					break
				}
			}
		}
	}
	for _, g := range h.groups {
		f.Groups = append(f.Groups, *perGroup[g])
	}
	sort.Slice(f.Overlaps, func(i, j int) bool { return f.Overlaps[i].Category < f.Overlaps[j].Category })
	h.mu.Lock()
	for _, fo := range h.failovers {
		lag := "synced"
		if fo.lag > 0 {
			lag = "replica cut off " + fo.lag.Round(10*time.Millisecond).String()
		}
		f.Failovers = append(f.Failovers, fmt.Sprintf("%.0fs %s, %d of %d keys lost or behind", fo.detach.Seconds(), lag,
			fo.lostKeys, len(fo.old)))
	}
	h.mu.Unlock()
	f.Steps = map[string]int64{}
	h.ev.mu.Lock()
	for k, v := range h.ev.steps {
		f.Steps[k] = v
	}
	h.ev.mu.Unlock()
	h.errSample.mu.Lock()
	for k, v := range h.errSample.seen {
		f.Errors[k] = int64(v)
	}
	h.errSample.mu.Unlock()
	return f
}

// volatileRestartBetween reports whether a server of g without persistence
// restarted within [from, to].
func (h *harness) volatileRestartBetween(g *group, from, to time.Duration) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, r := range h.restarts {
		if r.srv.persistent || r.end < from || r.start > to {
			continue
		}
		for _, s := range g.servers {
			if s == r.srv {
				return true
			}
		}
	}
	return false
}

// skewMargin allows for the common clock's wall and monotonic readings, and
// the millisecond rounding of the values, in the takeover judgement.
const skewMargin = 5 * time.Millisecond

// classify finds what let y in while x held key.
func (h *harness) classify(key string, x, y *hold, holds []*hold) (Category, string) {
	g := x.w.group
	if h.volatileRestartBetween(g, x.acqStart, y.acqRet) {
		return DataLoss, "restart of a server without persistence"
	}
	if why, ok := h.failoverLost(x, y); ok {
		return FailoverLoss, why
	}
	if why, ok := h.ev.evictedUnder(x, y); ok {
		return Evicted, why
	}
	if x.w.kind == Java && y.w.kind == Java {
		return JavaScheme, "java with java"
	}
	if !x.w.kind.legacyOnly() && !y.w.kind.legacyOnly() {
		return GoCaused, "two holders of the modern key"
	}
	log := h.keyLog(key)
	// What let y in ran after x's acquire began and before y's acquire
	// returned.
	from, to := x.acqStart, y.acqRet
	// y took over a value its clock judged expired but whose writer's
	// lease was still running.
	if (y.entry.kind == entryTakeover || y.entry.kind == entryUnknown) && h.earlyTakeover(log, y, from) {
		return JavaScheme, "takeover judged by the taker's skewed clock (" + who(y.w.kind) + ")"
	}
	// x's value had been taken over early by someone else meanwhile.
	for _, z := range window(holds, from, to+span) {
		if z != x && z != y && (z.entry.kind == entryTakeover || z.entry.kind == entryUnknown) &&
			z.entry.sent <= to && z.entry.done >= from && h.earlyTakeover(log, z, from) {
			return JavaScheme, "the holder's lock was taken over earlier by a skewed clock (" + who(z.w.kind) + ")"
		}
	}
	// x's value was overwritten by a write whose writer's clock judged it
	// expired while x's lease ran: a takeover, even one that is no hold (its
	// reply was lost, its value stayed).
	if w, ok := h.overwrittenEarly(log, key, x, to); ok {
		return JavaScheme, "the holder's value was overwritten by a takeover judged by a skewed clock (" + who(
			w.worker.kind) + ")"
	}
	// A losing GETSET overwrote x's value.
	if ls := log.losersIn(from, to); len(ls) > 0 {
		return JavaScheme, "a losing GETSET overwrote the holder's value (" + who(ls[0].worker.kind) + ")"
	}
	// x's value was removed from under it meanwhile by the Java scheme:
	// a literal DEL (typically the rightful holder's, after x took its
	// lock over early), a losing GETSET, an early takeover.
	if why := h.removedUnder(log, holds, x, to); why != "" {
		return JavaScheme, "the holder's value was removed under it by " + why
	}
	if y.entry.kind == entryTakeover {
		ws := log.writers(y.entry.value, y.entry.done)
		if len(ws) == 0 {
			return GoCaused, "took over a value nobody was seen writing: " + y.entry.value
		}
		wr := ws[len(ws)-1]
		return GoCaused, fmt.Sprintf("took over the expired value %s written by %s while the holder's lease ran", wr.value,
			wr.worker.name)
	}
	// y found the key free (or could have): who deleted x's value?
	var scripted []deletion
	for _, d := range log.deletesIn(from, to) {
		if d.worker == x.w && d.sent >= x.relStart {
			continue // x's own release, after its interval
		}
		if d.worker.kind.literal() {
			return JavaScheme, "a literal DEL deleted the holder's value (" + who(d.worker.kind) + ")"
		}
		scripted = append(scripted, d)
	}
	if len(scripted) > 0 {
		// A Go release deleted x's value, by the owner window, while the
		// releaser's own clock said its lease ran (it releases only then:
		// the Java unlock would have sent DEL). That is the Java scheme's
		// doing when x had taken the releaser's lock over early, or when
		// the releaser's own value had been removed under it — by a
		// literal DEL, a losing GETSET or an early takeover — so that x
		// found the key free while the releaser still held.
		if (x.entry.kind == entryTakeover || x.entry.kind == entryUnknown) && h.earlyTakeover(log, x, x.acqStart-maxLease) {
			return JavaScheme, "the rightful holder released after a takeover judged by a skewed clock"
		}
		for _, d := range scripted {
			dh := holdReleasedBy(holds, d)
			if dh == nil {
				continue
			}
			if why := h.removedUnder(log, holds, dh, d.sent); why != "" {
				return JavaScheme, "a release by the owner window deleted a successor's value after " + why + " had removed the " +
					"releaser's own"
			}
		}
		d := scripted[0]
		return GoCaused, fmt.Sprintf("%s by %s deleted a live holder's value", d.how, d.worker.kind)
	}
	if y.entry.kind == entryUnknown {
		return GoCaused, "entry unknown"
	}
	return GoCaused, "found the key free while it was held, no deletion seen"
}

// window returns the holds (sorted by acqRet) whose acquire returned in
// [from, to].
func window(holds []*hold, from, to time.Duration) []*hold {
	i := sort.Search(len(holds), func(i int) bool { return holds[i].acqRet >= from })
	j := sort.Search(len(holds), func(i int) bool { return holds[i].acqRet > to })
	if j < i {
		j = i
	}
	return holds[i:j]
}

// holdReleasedBy returns the hold whose release sent d.
func holdReleasedBy(holds []*hold, d deletion) *hold {
	for _, hd := range window(holds, d.sent-maxHold, d.sent) {
		if hd.w == d.worker && hd.relStart <= d.sent && d.sent <= hd.relRet {
			return hd
		}
	}
	return nil
}

// maxHold bounds a hold from acquire to release: an auto-refresh hold of
// three leases, a stall, and the release's timeout.
const maxHold = 3*maxLease + span

// removedUnder says what of the Java scheme may have removed dh's value
// from the key between its acquire and until ("" if nothing did).
func (h *harness) removedUnder(log *keyLog, holds []*hold, dh *hold, until time.Duration) string {
	for _, d := range log.deletesIn(dh.acqStart, until) {
		if d.worker != dh.w && d.worker.kind.literal() {
			return "a literal DEL (" + who(d.worker.kind) + ")"
		}
	}
	for _, l := range log.losersIn(dh.acqStart, until) {
		if l.worker != dh.w {
			return "a losing GETSET (" + who(l.worker.kind) + ")"
		}
	}
	for _, z := range window(holds, dh.acqStart, until+span) {
		if z != dh && (z.entry.kind == entryTakeover || z.entry.kind == entryUnknown) &&
			z.entry.sent <= until && z.entry.done >= dh.acqStart && h.earlyTakeover(log, z, dh.acqStart) {
			return "a takeover judged by a skewed clock (" + who(z.w.kind) + ")"
		}
	}
	return ""
}

// overwrittenEarly finds a write to key, sent in [x's acquire, until] by
// another skewed-clock worker and not known to have gone into an absent
// key (a takeover, or an attempt without a reply), that replaced x's value
// early: the writer's
// clock (when it sent) judged x's value expired while, by x's own clock,
// x's lease still ran when the write was sent.
func (h *harness) overwrittenEarly(log *keyLog, key string, x *hold, until time.Duration) (write, bool) {
	v, ok := x.entry.wrote[key]
	if !ok {
		return write{}, false
	}
	trueExpiry := mustInt(v) - x.w.offset.Milliseconds()
	for _, w := range log.writesIn(x.acqStart, until) {
		if w.worker == x.w || !w.worker.kind.skewed() || w.free {
			continue // x's own, not judged by a clock, or into an absent key
		}
		// The writer judged by its clock before it sent (the script's
		// cutoff, the Java client's GET): no later than w.at.
		judged := h.wallMs(w.at) + w.worker.offset.Milliseconds()
		if mustInt(v) < judged && trueExpiry >= h.wallMs(w.at)-skewMargin.Milliseconds() {
			return w, true
		}
	}
	return write{}, false
}

// maxLease is the longest lease of the soak.
const maxLease = 1600 * time.Millisecond

// earlyTakeover reports whether z's takeover may have replaced a value
// whose writer's lease, by the writer's own clock, had not ended when the
// takeover ran: a takeover only a clock running ahead of the writer's
// allows. For a known takeover that is the value it replaced; for an
// acquire whose reply does not say (migrate's), any value written since
// from (and before the reply) that z's clock judged expired.
func (h *harness) earlyTakeover(log *keyLog, z *hold, from time.Duration) bool {
	early := func(wr write) bool {
		trueExpiry := mustInt(wr.value) - wr.worker.offset.Milliseconds()
		return trueExpiry >= h.wallMs(z.entry.sent)-skewMargin.Milliseconds()
	}
	if z.entry.kind == entryTakeover {
		for _, wr := range log.writers(z.entry.value, z.entry.done) {
			if early(wr) {
				return true
			}
		}
		return false
	}
	judged := h.wallMs(z.entry.sent) + z.w.offset.Milliseconds() // z's now
	for _, wr := range log.writesIn(from, z.entry.done) {
		if wr.worker != z.w && mustInt(wr.value) < judged && early(wr) {
			return true
		}
	}
	return false
}

func who(k Kind) string {
	if k == Java {
		return "by a Java client"
	}
	return "by a Go " + string(k) + " locker"
}

func mustInt(s string) int64 {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0
	}
	return n
}

func countGoroutines() int { return runtime.NumGoroutine() }

type leakResult struct {
	after  int
	stacks string
}

// settleGoroutines waits up to 10 s for the goroutine count to fall back to
// before; it returns the count and, if it did not, the stacks.
func settleGoroutines(before int) leakResult {
	deadline := time.Now().Add(10 * time.Second)
	for {
		n := runtime.NumGoroutine()
		if n <= before {
			return leakResult{after: n}
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			buf = buf[:runtime.Stack(buf, true)]
			return leakResult{after: n, stacks: string(buf)}
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Table renders the figures as a Markdown table, with the faults, causes
// and lost locks below it.
func (f *Figures) Table() string {
	var b strings.Builder
	fmt.Fprintf(&b, "soak: %v, seed %d\n\n", f.Duration.Round(time.Second), f.Seed)
	fmt.Fprintf(&b, "| group | workers | acquisitions | overlaps (a) Go | (b) Java scheme | (c) restart data loss | (d) "+
		"failover data loss | (e) evicted | lost (ErrLost) | release not held | pauses | acquire errors | release errors |\n")
	fmt.Fprintf(&b, "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	var tot GroupFigures
	for _, g := range f.Groups {
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %d | %d | %d | %d | %d | %d | %d | %d | %d |\n", g.Name, g.Kinds,
			g.Acquisitions, g.A, g.B, g.C, g.D, g.E, g.Lost, g.NotHeld, g.Pauses, g.AcquireErrs, g.ReleaseErr)
		tot.Acquisitions += g.Acquisitions
		tot.A += g.A
		tot.B += g.B
		tot.C += g.C
		tot.D += g.D
		tot.E += g.E
		tot.Lost += g.Lost
		tot.NotHeld += g.NotHeld
		tot.Pauses += g.Pauses
		tot.AcquireErrs += g.AcquireErrs
		tot.ReleaseErr += g.ReleaseErr
	}
	fmt.Fprintf(&b, "| **total** | | %d | %d | %d | %d | %d | %d | %d | %d | %d | %d | %d |\n\n", tot.Acquisitions, tot.A,
		tot.B, tot.C, tot.D, tot.E, tot.Lost, tot.NotHeld, tot.Pauses, tot.AcquireErrs, tot.ReleaseErr)
	fmt.Fprintf(&b, "(b) overlaps per 1000 acquisitions, against the Java-only baseline:")
	for _, g := range f.Groups {
		if g.Acquisitions > 0 && (g.B > 0 || g.Name == "java-baseline") {
			fmt.Fprintf(&b, " %s %.0f;", g.Name, 1000*float64(g.B)/float64(g.Acquisitions))
		}
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "\nfaults injected:")
	for _, k := range sortedKeys(f.Faults) {
		fmt.Fprintf(&b, " %s %d;", k, f.Faults[k])
	}
	fmt.Fprintf(&b, "\nlost locks signalled (Done closed, ErrLost):")
	for _, k := range sortedKeys(kindMap(f.Lost)) {
		fmt.Fprintf(&b, " %s %d;", k, f.Lost[Kind(k)])
	}
	fmt.Fprintf(&b, "\nfence regressions: %d\n", f.FenceRegressions)
	fmt.Fprintf(&b, "failovers: %d —", len(f.Failovers))
	for _, l := range f.Failovers {
		fmt.Fprintf(&b, " %s;", l)
	}
	fmt.Fprintf(&b, "\ncontroller steps under eviction:")
	for _, k := range sortedKeys(f.Steps) {
		fmt.Fprintf(&b, " %s %d;", k, f.Steps[k])
	}
	fmt.Fprintf(&b, "\nauto-refresh holds whose Done was still open after ExpiresAt (a late timer): %d\n", f.LateDone)
	fmt.Fprintf(&b, "goroutines: %d before, %d after Close\n", f.GoroutinesBefore, f.GoroutinesAfter)
	if len(f.Causes) > 0 {
		fmt.Fprintf(&b, "\noverlaps by cause:\n")
		for _, k := range sortedKeys(f.Causes) {
			fmt.Fprintf(&b, "  %5d  (%s\n", f.Causes[k], strings.Replace(k, ":", ")", 1))
		}
	}
	return b.String()
}

func kindMap(m map[Kind]int64) map[string]int64 {
	out := map[string]int64{}
	for k, v := range m {
		out[string(k)] = v
	}
	return out
}
