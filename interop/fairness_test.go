package interop

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/lockbridge/lockbridge/legacy"
	"github.com/lockbridge/lockbridge/migrate"
)

// fairnessPairs are the pairs whose shares are measured: the Java lockers at
// their usual polling (100 ms, the default of the Spring lockers, of
// RedisLockRegistry and the fixed interval of jedis-lock) beside Go lockers
// with their defaults.
// fairnessPoll is the Java side's polling in the fairness runs.
var fairnessPoll = javaFlags{"poll-ms": "100"}

func fairnessPairs() []pair {
	poll := fairnessPoll
	return []pair{
		{java: javaCallbackLettuceString, goes: legacySide("legacy-atomic", legacy.ModeAtomic, profileRaw), javaFlags: poll},
		{java: javaCallbackLettuceString, goes: migrateSide(migrate.PhaseDualWrite, profileRaw), javaFlags: poll},
		{java: javaJedisLock, goes: legacySide("legacy-classic", legacy.ModeClassic, profileRaw), javaFlags: poll},
		{java: javaJedisLock, goes: migrateSide(migrate.PhaseDualWrite, profileRaw), javaFlags: poll},
		{java: javaIntegration, goes: modernSide("locks:" + lockName), javaFlags: poll},
		{java: javaShedLock, goes: modernSide("job-lock:default:" + lockName), javaFlags: poll},
	}
}

// fairDuration is how long each fairness run saturates the lock: 60 s in
// the long run, LOCKBRIDGE_INTEROP_FAIR to override.
func fairDuration() time.Duration {
	if s := os.Getenv("LOCKBRIDGE_INTEROP_FAIR"); s != "" {
		if d, err := time.ParseDuration(s); err == nil {
			return d
		}
	}
	return time.Minute
}

// goPause is a pause of each Go worker after its release
// (LOCKBRIDGE_INTEROP_GO_PAUSE, none by default): it estimates what a
// re-entry pause of the Go side would buy the Java side.
func goPause() time.Duration {
	d, _ := time.ParseDuration(os.Getenv("LOCKBRIDGE_INTEROP_GO_PAUSE"))
	return d
}

// thinkTime is a pause of every worker, Java and Go, after each release
// (LOCKBRIDGE_INTEROP_THINK, none by default): services that do other work
// between two uses of the lock.
func thinkTime() time.Duration {
	d, _ := time.ParseDuration(os.Getenv("LOCKBRIDGE_INTEROP_THINK"))
	return d
}

// goPoll makes the Go workers poll as the Java side does
// (LOCKBRIDGE_INTEROP_GO_POLL, e.g. 100ms; off by default): an estimate of a
// Go side that defers to pollers.
func goPoll() time.Duration {
	d, _ := time.ParseDuration(os.Getenv("LOCKBRIDGE_INTEROP_GO_POLL"))
	return d
}

// TestInteropFairness measures each worker's share of the acquisitions
// under sustained contention (2 Java threads, 2 Go workers, each holding
// 5 ms and coming straight back): fair share = acquisitions per worker ÷
// the mean per worker. It logs the figures (docs/java.md quotes them) and
// checks exclusion; it runs in the long run only (make interop-long), or
// with LOCKBRIDGE_INTEROP_FAIR set.
func TestInteropFairness(t *testing.T) {
	if !long() && os.Getenv("LOCKBRIDGE_INTEROP_FAIR") == "" {
		t.Skip("a long run: make interop-long (or LOCKBRIDGE_INTEROP_FAIR=20s)")
	}
	d := fairDuration()
	var report []string
	for _, p := range fairnessPairs() {
		p := p
		t.Run(p.name(), func(t *testing.T) {
			e := newEnv(t)
			if think := thinkTime(); think > 0 {
				p.javaFlags = javaFlags{"think-ms": fmt.Sprint(think.Milliseconds())}
				for k, v := range fairnessPoll {
					p.javaFlags[k] = v
				}
			}
			res := contend(t, e, p, fleet{javaThreads: 2, goWorkers: 2, duration: d, lease: 10 * time.Second, hold: 5 * time.Millisecond, goThink: goPause() + thinkTime(), goPoll: goPoll()})
			total := res.javaAcq + res.goAcq
			mean := float64(total) / float64(len(res.perWorker))
			var ws []string
			for w := range res.perWorker {
				ws = append(ws, w)
			}
			sort.Strings(ws)
			var shares []string
			minShare := 100.0
			for _, w := range ws {
				s := float64(res.perWorker[w]) / mean
				if s < minShare {
					minShare = s
				}
				shares = append(shares, fmt.Sprintf("%s %d (%.2f)", w, res.perWorker[w], s))
			}
			line := fmt.Sprintf("%-45s %6d acq in %v, java %5.1f%%, overlaps %d, min fair share %.2f: %s",
				p.name(), total, d, 100*float64(res.javaAcq)/float64(max(total, 1)), res.overlaps, minShare, strings.Join(shares, ", "))
			t.Log(line)
			report = append(report, line)
			assert.Zero(t, res.overlaps)
		})
	}
	t.Logf("fairness over %v per pair:\n%s", d, strings.Join(report, "\n"))
}
