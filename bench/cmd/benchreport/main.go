package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/lockbridge/lockbridge/bench/internal/awake"
	"github.com/lockbridge/lockbridge/bench/internal/docsection"
	"github.com/lockbridge/lockbridge/bench/internal/impls"
	"github.com/lockbridge/lockbridge/bench/internal/machine"
	"github.com/lockbridge/lockbridge/bench/internal/redisserver"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "benchreport: %v\n", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		out   = flag.String("out", "../docs/performance.md", "the Markdown report to write")
		chart = flag.String("chart", "results/handoff.svg", "the hand-off chart (SVG) to write")
		raw   = flag.String("json", "results/results.json", "the raw results (JSON) to write; empty: none")
		quick = flag.Bool("quick", false, "a short run, to check that everything works (numbers are rough)")
		from  = flag.String("render", "",
			"measure nothing: write the report and chart from this raw results file (as -json writes), e.g. after editing "+
				"analysis.md")
		only = flag.String("redis", "",
			"use this redis-server (host:port) instead of starting one; it must be dedicated to the run, as MONITOR counts "+
				"every client's commands")
		wake = flag.Bool("awake", true,
			"keep the cores from halting while measuring (a 0 µs CPU latency request on /dev/cpu_dma_latency; needs root): "+
				"round trips then cost the same from one to the next")
	)
	opts := Options{
		Rounds: 41, CycleOps: 100, TakeoverOps: 100, CountOps: 200, ServerOps: 2000, AllocOps: 1000,
		HandoffRounds: 3, HandoffDur: 1500 * time.Millisecond, Workers: 8, Hold: 100 * time.Microsecond,
		Stagger:    100 * time.Millisecond,
		ManyRounds: 3, ManyDur: time.Second, ManyWorkers: 64, ManyKeys: 1000,
	}
	flag.IntVar(&opts.Rounds, "rounds", opts.Rounds, "rounds of the cycle and takeover scenarios")
	flag.IntVar(&opts.HandoffRounds, "handoff-rounds", opts.HandoffRounds, "rounds of the hand-off scenario")
	flag.DurationVar(&opts.HandoffDur, "handoff-time", opts.HandoffDur, "time per hand-off configuration per round")
	flag.Parse()
	if *quick {
		opts.Rounds, opts.CycleOps, opts.TakeoverOps, opts.CountOps, opts.ServerOps, opts.AllocOps = 2, 100, 100, 50, 200, 200
		opts.HandoffRounds, opts.HandoffDur, opts.ManyRounds, opts.ManyDur = 1, 500*time.Millisecond, 1, 300*time.Millisecond
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
		return write(&res, *out, *chart, "", res.Quick)
	}

	addr := *only
	if addr == "" {
		srv, err := redisserver.Start()
		if err != nil {
			return err
		}
		defer srv.Close()
		addr = srv.Addr()
	}
	start := time.Now()
	loadBefore := machine.Loadavg()
	r, err := newRunner(addr, opts, impls.All())
	if err != nil {
		return err
	}
	defer r.close()
	info, err := r.setup.Info("server")
	if err != nil {
		return err
	}
	awakeNote := "not asked for (-awake=false)"
	if *wake {
		release, err := awake.Hold()
		if err != nil {
			awakeNote = err.Error()
			logf("cores may halt when idle: %v", err)
		} else {
			awakeNote = ""
			defer release()
		}
	}
	cpu0, cpuOK := machine.SampleCPU(info["process_id"])
	res, err := r.measure(context.Background())
	if err != nil {
		return err
	}
	cpu1, cpuOK1 := machine.SampleCPU(info["process_id"])
	res.Env = machine.Environment(info["redis_version"])
	res.Env.LoadBefore, res.Env.LoadAfter = loadBefore, machine.Loadavg()
	res.Env.Awake, res.Env.AwakeNote = awakeNote == "", awakeNote
	if cpuOK && cpuOK1 && *only == "" {
		res.Env.OtherCPU = machine.OtherShare(cpu0, cpu1)
	}

	res.Quick = *quick
	if err := write(res, *out, *chart, *raw, *quick); err != nil {
		return err
	}
	logf("wrote %s in %v", *out, time.Since(start).Round(time.Second))
	return nil
}

// write writes the chart, the raw results (raw non-empty) and the report.
func write(res *Results, out, chart, raw string, quick bool) error {
	if chart != "" {
		if err := writeFile(chart, handoffChart(res)); err != nil {
			return err
		}
	}
	if raw != "" {
		b, err := json.MarshalIndent(res, "", "  ")
		if err != nil {
			return err
		}
		if err := writeFile(raw, append(b, '\n')); err != nil {
			return err
		}
	}
	chartRef := ""
	if chart != "" {
		var err error
		if chartRef, err = relPath(filepath.Dir(out), chart); err != nil {
			return err
		}
	}
	doc := markdown(res, chartRef, quick)
	// The sections other generators keep in the same file (make
	// bench-scale's) are carried over.
	if old, err := os.ReadFile(out); err == nil {
		if doc, err = docsection.Carry(string(old), doc); err != nil {
			return fmt.Errorf("%s: %w", out, err)
		}
	}
	return writeFile(out, []byte(doc))
}

func writeFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

// relPath is target relative to dir, with forward slashes, for a Markdown link.
func relPath(dir, target string) (string, error) {
	ad, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	at, err := filepath.Abs(target)
	if err != nil {
		return "", err
	}
	rel, err := filepath.Rel(ad, at)
	if err != nil {
		return "", err
	}
	return filepath.ToSlash(rel), nil
}
