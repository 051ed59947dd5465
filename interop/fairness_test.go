package interop

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/lockbridge/lockbridge/internal/protocol/legacyproto"
	"github.com/lockbridge/lockbridge/legacy"
	"github.com/lockbridge/lockbridge/migrate"
	"github.com/lockbridge/lockbridge/modern"
)

// fairnessPoll is the Java side's polling in the fairness runs: 100 ms, the
// default of the Spring lockers, of RedisLockRegistry and the fixed
// interval of jedis-lock.
var fairnessPoll = javaFlags{"poll-ms": "100"}

// fairnessPairs are the pairs whose shares are measured: the Java lockers at
// their usual polling beside Go lockers that defer to pollers (polite:
// legacy and modern WithPollers(100 ms), migrate's default) or do not
// (legacy and modern by default, migrate WithPollers(0)).
func fairnessPairs(polite bool) []pair {
	poll := fairnessPoll
	var (
		lo      []legacy.Option
		mo      []modern.Option
		migOpts = []migrate.Option{migrate.WithPollers(0)}
	)
	if polite {
		lo = []legacy.Option{legacy.WithPollers(100 * time.Millisecond)}
		mo = []modern.Option{modern.WithPollers(100 * time.Millisecond)}
		migOpts = nil
	}
	return []pair{
		{java: javaCallbackLettuceString, goes: legacySide("legacy-atomic", legacyproto.ModeAtomic, append(profileRaw,
			lo...)),
			javaFlags: poll},
		{java: javaCallbackLettuceString, goes: migrateSide(migrate.PhaseDualWrite, profileRaw, migOpts...), javaFlags: poll},
		{java: javaJedisLock, goes: legacySide("legacy-classic", legacyproto.ModeClassic, append(profileRaw, lo...)),
			javaFlags: poll},
		{java: javaJedisLock, goes: migrateSide(migrate.PhaseDualWrite, profileRaw, migOpts...), javaFlags: poll},
		{java: javaIntegration, goes: modernSide("locks:"+lockName, mo...), javaFlags: poll},
		{java: javaShedLock, goes: modernSide("job-lock:default:"+lockName, mo...), javaFlags: poll},
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

// envDuration reads a duration from the environment (0 when unset).
func envDuration(name string) time.Duration {
	d, _ := time.ParseDuration(os.Getenv(name))
	return d
}

// workload is one shape of contention in the fairness runs.
type workload struct {
	name string
	// think is every worker's pause after each release, Java and Go:
	// services that do other work between two uses of the lock.
	think time.Duration
	// polite: the Go lockers defer to the pollers (WithPollers).
	polite bool
	// goPoll, when set, makes the Go workers wait by a loop of their own
	// (TryLock, then a pause drawn from [goPoll/2, goPoll]) instead of
	// Lock.
	goPoll time.Duration
}

// workloads are the fairness runs: saturated (everyone comes straight
// back) and services (everyone thinks 20 ms between uses), each with Go
// lockers that do not defer to the pollers and with Go lockers that do.
// LOCKBRIDGE_INTEROP_THINK and LOCKBRIDGE_INTEROP_GO_POLL run one workload
// of their own instead (LOCKBRIDGE_INTEROP_POLITE=1: deferring).
func workloads() []workload {
	think, poll := envDuration("LOCKBRIDGE_INTEROP_THINK"), envDuration("LOCKBRIDGE_INTEROP_GO_POLL")
	polite := os.Getenv("LOCKBRIDGE_INTEROP_POLITE") != ""
	if think > 0 || poll > 0 || polite {
		return []workload{{name: fmt.Sprintf("think %v, go-poll %v, polite %v", think, poll, polite), think: think,
			goPoll: poll, polite: polite}}
	}
	return []workload{
		{name: "saturated"},
		{name: "saturated, go defers", polite: true},
		{name: "services", think: 20 * time.Millisecond},
		{name: "services, go defers", think: 20 * time.Millisecond, polite: true},
	}
}

// TestInteropFairness measures each worker's share of the acquisitions
// under sustained contention (2 Java threads, 2 Go workers, each holding
// 5 ms), in each workload: fair share = acquisitions per worker ÷ the mean
// per worker. It logs the figures (docs/java.md quotes them) and checks
// exclusion; it runs in the long run only (make interop-long: 60 s per pair
// and workload), or with LOCKBRIDGE_INTEROP_FAIR set (e.g. 15s).
func TestInteropFairness(t *testing.T) {
	if !long() && os.Getenv("LOCKBRIDGE_INTEROP_FAIR") == "" {
		t.Skip("a long run: make interop-long (or LOCKBRIDGE_INTEROP_FAIR=15s)")
	}
	d := fairDuration()
	var report []string
	for _, wl := range workloads() {
		for _, p := range fairnessPairs(wl.polite) {
			p := p
			t.Run(wl.name+"/"+p.name(), func(t *testing.T) {
				e := newEnv(t)
				if wl.think > 0 {
					p.javaFlags = javaFlags{"think-ms": fmt.Sprint(wl.think.Milliseconds())}
					for k, v := range fairnessPoll {
						p.javaFlags[k] = v
					}
				}
				res := contend(t, e, p, fleet{javaThreads: 2, goWorkers: 2, duration: d, lease: 10 * time.Second,
					hold: 5 * time.Millisecond, goThink: wl.think, goPoll: wl.goPoll})
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
				line := fmt.Sprintf("%-20s %-45s %6d acq, java %5.1f%%, overlaps %d, min fair share %.2f: %s",
					wl.name, p.name(), total, 100*float64(res.javaAcq)/float64(max(total, 1)), res.overlaps, minShare,
					strings.Join(shares, ", "))
				t.Log(line)
				report = append(report, line)
				assert.Zero(t, res.overlaps)
			})
		}
	}
	t.Logf("fairness over %v per pair:\n%s", d, strings.Join(report, "\n"))
}
