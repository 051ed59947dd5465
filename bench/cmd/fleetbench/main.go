// Command fleetbench measures what a migration's fleet costs its Redis:
// simulated fleets of real migrate.Lockers (each its own registry member,
// many per process) at the default intervals, on one server and on a
// 3-primary cluster. It writes a Markdown section (between the markers
// <!-- begin fleet --> and <!-- end fleet --> of -doc) and an SVG chart.
//
//	cd bench && go run ./cmd/fleetbench -doc ../docs/performance.md -chart results/fleet.svg
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/lockbridge/lockbridge/bench/internal/docsection"
	"github.com/lockbridge/lockbridge/bench/internal/fleet"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "fleetbench: %v\n", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		doc = flag.String("doc", "../docs/performance.md",
			"the Markdown file whose fleet section (between <!-- begin fleet --> and <!-- end fleet -->) is rewritten; empty: "+
				"print it")
		chart  = flag.String("chart", "results/fleet.svg", "the chart (SVG) to write; empty: none")
		sizes  = flag.String("sizes", "100,1000,10000", "fleet sizes")
		topos  = flag.String("topologies", "single,cluster", "single, cluster or both")
		window = flag.Duration("window", 20*time.Second, "the steady-state window")
		root   = flag.String("root", "..", "the repository's root")
	)
	flag.Parse()
	var ns []int
	for _, s := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return fmt.Errorf("-sizes: %q", s)
		}
		ns = append(ns, n)
	}
	start := time.Now()
	load0 := loadavg()
	var results []fleet.Result
	for _, t := range strings.Split(*topos, ",") {
		for _, n := range ns {
			cfg := fleet.Config{Lockers: n, Cluster: t == "cluster", Window: *window, Root: *root,
				Log: func(f string, a ...any) { fmt.Fprintf(os.Stderr, "fleetbench: %s: "+f+"\n", append([]any{t}, a...)...) }}
			r, err := fleet.Run(context.Background(), cfg)
			if err != nil {
				return fmt.Errorf("%s, %d lockers: %w", t, n, err)
			}
			fmt.Fprintf(os.Stderr, "fleetbench: %s\n", row(r))
			results = append(results, r)
		}
	}
	took := time.Since(start).Round(time.Second)
	chartRef := ""
	if *chart != "" {
		if err := os.WriteFile(*chart, []byte(svg(results)), 0o644); err != nil {
			return err
		}
		if *doc != "" {
			var err error
			if chartRef, err = rel(filepath.Dir(*doc), *chart); err != nil {
				return err
			}
		}
	}
	md := section(results, chartRef, took, load0, loadavg())
	if *doc == "" {
		fmt.Print(md)
		return nil
	}
	return docsection.WriteFile(*doc, "fleet", md)
}

// loadavg is the machine's 1-minute load average, "" when unknown: other
// work on the machine shares its cores with the server and the fleet.
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

func rel(dir, target string) (string, error) {
	ad, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	at, err := filepath.Abs(target)
	if err != nil {
		return "", err
	}
	r, err := filepath.Rel(ad, at)
	return filepath.ToSlash(r), err
}

func topo(r fleet.Result) string {
	if r.Cluster {
		return "cluster (3 primaries)"
	}
	return "one server"
}

func us(d time.Duration) string { return strconv.FormatFloat(float64(d)/1e3, 'f', 1, 64) }
func ms(d time.Duration) string { return strconv.FormatFloat(float64(d)/1e6, 'f', 1, 64) }
func pct(f float64) string      { return strconv.FormatFloat(f*100, 'f', 2, 64) + " %" }

// row is one line of the progress log.
func row(r fleet.Result) string {
	return fmt.Sprintf("%s %d: %.0f round trips/s %v, CPU %s (others %v, upkeep %s, commands %s), %s µs/rt (floor %s), "+
		"Status %s ms (server %s), Advance %s ms (server %s), memory %d B, seen 99%% %s ms all %s ms, commands %v, after "+
		"step %v",
		topo(r), r.Lockers, r.RoundTrips, r.Sent, pct(r.CPU), r.CPUOthers, pct(r.Upkeep), pct(r.Heartbeats),
		us(r.PerRoundTrip), us(r.Floor), ms(r.Status), ms(r.StatusServer),
		ms(r.Advance), ms(r.AdvanceServer), r.Memory, ms(r.Seen99), ms(r.SeenAll), r.Commands, r.AfterStep)
}
