package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/lockbridge/lockbridge/bench/internal/docsection"
	"github.com/lockbridge/lockbridge/bench/internal/machine"
)

// Section is the name of this command's section of docs/performance.md.
const Section = "bench-scale"

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "benchscale: %v\n", err)
		os.Exit(1)
	}
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "benchscale: "+format+"\n", args...)
}

// Options size the run.
type Options struct {
	CycleRounds int // rounds of the loopback cycle, per regime
	CycleOps    int // cycles of each side of a pair per block
	ServerOps   int // cycles per implementation for INFO commandstats and cpu
	CountOps    int // cycles per implementation counted under MONITOR
	ClientOps   int // cycles per implementation for the client CPU pass
	AllocOps    int // cycles per allocation measurement

	Primaries   []int // cluster sizes (besides the single server)
	ManyKeys    []int
	ManyWorkers int
	ManyRounds  int
	ManyDur     time.Duration

	Waiters       []int
	HandoffRounds int
	HandoffDur    time.Duration
	Hold          time.Duration
	Stagger       time.Duration

	Latencies      []time.Duration // added round trips
	LatCycleRounds int
	LatCycleOps    int
	LatHandoffDur  time.Duration
	LatManyDur     time.Duration
}

func defaults() Options {
	return Options{
		CycleRounds: 31, CycleOps: 100, ServerOps: 2000, CountOps: 200, ClientOps: 20000, AllocOps: 1000,
		Primaries: []int{1, 3, 6}, ManyKeys: []int{1000, 100_000}, ManyWorkers: 64, ManyRounds: 2,
		ManyDur: 800 * time.Millisecond,
		Waiters: []int{8, 64}, HandoffRounds: 2, HandoffDur: 1500 * time.Millisecond, Hold: 100 * time.Microsecond,
		Stagger:   100 * time.Millisecond,
		Latencies: []time.Duration{500 * time.Microsecond, 2 * time.Millisecond}, LatCycleRounds: 8, LatCycleOps: 20,
		LatHandoffDur: 1500 * time.Millisecond, LatManyDur: time.Second,
	}
}

func quickOpts(o Options) Options {
	o.CycleRounds, o.CycleOps, o.ServerOps, o.CountOps, o.ClientOps, o.AllocOps = 3, 50, 300, 50, 2000, 200
	o.ManyRounds, o.ManyDur = 1, 250*time.Millisecond
	o.HandoffRounds, o.HandoffDur = 1, 400*time.Millisecond
	o.LatCycleRounds, o.LatCycleOps, o.LatHandoffDur, o.LatManyDur = 2, 5, 400*time.Millisecond, 250*time.Millisecond
	return o
}

func run() error {
	var (
		out    = flag.String("out", "../docs/performance.md", "the Markdown file whose bench-scale section to write")
		charts = flag.String("charts", "results", "the directory of the charts (SVG)")
		raw    = flag.String("json", "results/scale.json", "the raw results (JSON) to write; empty: none")
		quick  = flag.Bool("quick", false, "a short run, to check that everything works (numbers are rough)")
		from   = flag.String("render", "", "measure nothing: write the section and charts from this raw results file")
		only   = flag.String("only", "",
			"measure only these parts (comma-separated: cycle, many, handoff, latency); the section then shows only them")
		proxy = flag.String("delay-proxy", "",
			"serve only a delay proxy to this address (host:port), adding -delay, until stdin closes; its address is printed "+
				"(the latency part runs its proxies so)")
		delay = flag.Duration("delay", 0, "the round trip -delay-proxy adds")
	)
	flag.Parse()
	if *proxy != "" {
		return serveProxy(*proxy, *delay)
	}
	if *from != "" {
		b, err := os.ReadFile(*from)
		if err != nil {
			return err
		}
		var res Results
		if err := json.Unmarshal(b, &res); err != nil {
			return fmt.Errorf("%s: %w", *from, err)
		}
		return write(&res, *out, *charts, "")
	}
	opts := defaults()
	if *quick {
		opts = quickOpts(opts)
	}
	parts, err := parseParts(*only)
	if err != nil {
		return err
	}
	start := time.Now()
	res := &Results{Opts: opts, Quick: *quick}
	res.Env.LoadBefore = machine.Loadavg()
	if err := measure(context.Background(), res, parts); err != nil {
		return err
	}
	res.Env.LoadAfter = machine.Loadavg()
	res.Elapsed = time.Since(start).Round(time.Second)
	if err := write(res, *out, *charts, *raw); err != nil {
		return err
	}
	logf("wrote the %s section of %s in %v", Section, *out, res.Elapsed)
	return nil
}

// write writes the raw results (raw non-empty; first, so that a failure
// after the measuring loses nothing -render cannot redo), the charts and the
// section.
func write(res *Results, out, charts, raw string) error {
	if raw != "" {
		b, err := json.MarshalIndent(res, "", "  ")
		if err != nil {
			return err
		}
		if err := writeFile(raw, append(b, '\n')); err != nil {
			return err
		}
	}
	outDir, err := filepath.Abs(filepath.Dir(out))
	if err != nil {
		return err
	}
	refs := map[string]string{}
	for name, svg := range renderCharts(res) {
		path := filepath.Join(charts, name)
		if err := writeFile(path, svg); err != nil {
			return err
		}
		abs, err := filepath.Abs(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(outDir, abs)
		if err != nil {
			return err
		}
		refs[name] = filepath.ToSlash(rel)
	}
	return docsection.WriteFile(out, Section, markdown(res, refs))
}

func writeFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}
