package soak

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// The accepted classes need their evidence: these feed the classifiers
// made-up records and check that each piece of evidence missing leaves the
// overlap unexplained.

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

func testHold(w *worker, start, ret, end int, wrote map[string]string) *hold {
	return &hold{w: w, key: "k", acqStart: ms(start), acqRet: ms(ret), end: ms(end), entry: entry{wrote: wrote}}
}

func TestClassifyFailoverNeedsTheLostWrite(t *testing.T) {
	h := &harness{}
	wx, wy := &worker{name: "x"}, &worker{name: "y"}
	x := testHold(wx, 1000, 1010, 3000, map[string]string{"k": "tx"})
	y := testHold(wy, 2100, 2110, 2500, map[string]string{"k": "ty"})
	fo := func(old, cur map[string]keyState) *failover {
		return &failover{lag: time.Second, detach: ms(500), pause: ms(1500), promote: ms(2000), old: old, cur: cur}
	}
	cases := []struct {
		name string
		f    *failover
		x, y *hold
		want bool
	}{
		{"the new primary lacks the key", fo(map[string]keyState{"k": {"tx", 5000}}, map[string]keyState{}), x, y, true},
		{"another value there", fo(map[string]keyState{"k": {"tx", 5000}}, map[string]keyState{"k": {"tz", 4000}}), x, y,
			true},
		{"a refresh lost", fo(map[string]keyState{"k": {"tx", 5000}}, map[string]keyState{"k": {"tx", 4000}}), x, y, true},
		{"kept as it was", fo(map[string]keyState{"k": {"tx", 5000}}, map[string]keyState{"k": {"tx", 5000}}), x, y, false},
		{"not the holder's value when writes stopped", fo(map[string]keyState{"k": {"tz", 5000}}, map[string]keyState{}), x,
			y, false},
		{"absent when writes stopped", fo(map[string]keyState{}, map[string]keyState{}), x, y, false},
		{"the second got in before the promotion", fo(map[string]keyState{"k": {"tx", 5000}}, map[string]keyState{}), x,
			testHold(wy, 1900, 1950, 2500, nil), false},
		{"the first acquired after writes stopped", fo(map[string]keyState{"k": {"tx", 5000}}, map[string]keyState{}),
			testHold(wx, 1600, 2050, 3000, map[string]string{"k": "tx"}), y, false},
	}
	for _, c := range cases {
		h.failovers = []*failover{c.f}
		_, got := h.failoverLost(c.x, c.y)
		assert.Equal(t, c.want, got, c.name)
	}
	h.failovers = nil
	_, got := h.failoverLost(x, y)
	assert.False(t, got, "no failover")
}

func TestClassifyEvictionNeedsTheEviction(t *testing.T) {
	wx, wy := &worker{name: "x"}, &worker{name: "y"}
	x := testHold(wx, 1000, 1010, 3000, map[string]string{"k": "tx"})
	y := testHold(wy, 2000, 2010, 2500, map[string]string{"k": "ty"})
	// Markers every 100 ms, each answered 1 ms after it was sent.
	ev := &evictor{h: &harness{}, markers: map[int]marker{}, events: map[string][]ksEvent{}}
	for i := 0; i < 50; i++ {
		ev.markers[i] = marker{sent: ms(100 * i), replied: ms(100*i + 1)}
	}
	// e(name, m) is an event received between markers m and m+1: it ran in
	// [100m, 100(m+1)+1] ms.
	e := func(name string, m int) ksEvent { return ksEvent{event: name, prev: m, next: m + 1} }
	cases := []struct {
		name   string
		events []ksEvent
		want   bool
	}{
		{"set, evicted, set", []ksEvent{e("set", 10), e("expire", 12), e("evicted", 15), e("set", 20)}, true},
		{"a later set after the eviction", []ksEvent{e("set", 10), e("evicted", 15), e("set", 16), e("del", 17), e("set",
			20)}, true},
		{"no eviction", []ksEvent{e("set", 10), e("del", 15), e("set", 20)}, false},
		{"deleted before the eviction", []ksEvent{e("set", 10), e("del", 12), e("evicted", 15), e("set", 20)}, false},
		{"the eviction before the first's set", []ksEvent{e("evicted", 9), e("set", 10), e("set", 20)}, false},
		{"no set of the first's before it", []ksEvent{e("set", 5), e("evicted", 15), e("set", 20)}, false},
		{"no set of the second's after it", []ksEvent{e("set", 10), e("evicted", 15), e("set", 25)}, false},
		{"another key evicted", nil, false},
	}
	for _, c := range cases {
		ev.events = map[string][]ksEvent{"k": c.events}
		if c.events == nil {
			ev.events = map[string][]ksEvent{"other": {e("set", 10), e("evicted", 15), e("set", 20)}}
		}
		_, got := ev.evictedUnder(x, y)
		assert.Equal(t, c.want, got, c.name)
	}
	// A key only one of them wrote is no evidence.
	ev.events = map[string][]ksEvent{"k": {e("set", 10), e("evicted", 15), e("set", 20)}}
	_, got := ev.evictedUnder(x, testHold(wy, 2000, 2010, 2500, map[string]string{"k2": "ty"}))
	assert.False(t, got, "the second wrote another key")
}

func TestClassifyTakeoverWithoutReplyNeedsTheSkew(t *testing.T) {
	h := &harness{t0: time.Now()}
	behind := &worker{name: "x", kind: Atomic, offset: -5 * time.Second}
	ahead := &worker{name: "z", kind: Atomic, offset: 500 * time.Millisecond}
	same := &worker{name: "s", kind: Atomic, offset: -5 * time.Second}
	// x's value: its own clock at its acquire plus an 800 ms lease.
	v := strconv.FormatInt(h.wallMs(ms(1000))-5000+800, 10)
	x := testHold(behind, 1000, 1010, 1700, map[string]string{"k": v})
	for _, c := range []struct {
		name string
		w    *worker
		at   int
		want bool
	}{
		{"a clock ahead judged it expired within its lease", ahead, 1100, true},
		{"a clock like the holder's did not", same, 1100, false},
		{"after its lease", ahead, 1900, false},
		{"the holder's own write", behind, 1100, false},
		{"a write into an absent key", ahead, -1100, false},
	} {
		log := &keyLog{}
		free := c.at < 0
		if free {
			c.at = -c.at
		}
		log.addWrite(write{worker: c.w, value: "1", at: ms(c.at), done: ms(c.at + 5), free: free})
		_, got := h.overwrittenEarly(log, "k", x, ms(2000))
		assert.Equal(t, c.want, got, c.name)
	}
}
