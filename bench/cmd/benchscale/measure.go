package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lockbridge/lockbridge/bench/internal/awake"
	"github.com/lockbridge/lockbridge/bench/internal/machine"
)

// The parts of the run, in order.
const (
	partCycle   = "cycle"
	partMany    = "many"
	partHandoff = "handoff"
	partLatency = "latency"
)

var allParts = []string{partCycle, partMany, partHandoff, partLatency}

func parseParts(s string) ([]string, error) {
	if s == "" {
		return allParts, nil
	}
	var out []string
	for _, p := range strings.Split(s, ",") {
		p = strings.TrimSpace(p)
		if !slices.Contains(allParts, p) {
			return nil, fmt.Errorf("-only: no part %q (parts: %s)", p, strings.Join(allParts, ", "))
		}
		out = append(out, p)
	}
	return out, nil
}

// cores keeps the machine's cores awake (awake.Hold) and lets them halt
// again, remembering why it cannot when it cannot.
type cores struct {
	release func()
	note    string
}

func (c *cores) wake() {
	if c.release != nil || c.note != "" {
		return
	}
	r, err := awake.Hold()
	if err != nil {
		c.note = err.Error()
		logf("cores may halt when idle: %v", err)
		return
	}
	c.release = r
}

func (c *cores) sleep() {
	if c.release != nil {
		c.release()
		c.release = nil
	}
}

// env bundles the deployments of a run.
type env struct {
	opts     Options
	single   *deployment
	clusters []*deployment // by Opts.Primaries
	cores    *cores
}

func (e *env) close() {
	e.cores.sleep()
	for _, d := range append([]*deployment{e.single}, e.clusters...) {
		if d != nil {
			d.close()
		}
	}
}

func (e *env) cluster(primaries int) *deployment {
	for _, d := range e.clusters {
		if d.primaries == primaries {
			return d
		}
	}
	return nil
}

func measure(ctx context.Context, res *Results, parts []string) error {
	e := &env{opts: res.Opts, cores: &cores{}}
	defer e.close()
	var err error
	if e.single, err = startSingle(); err != nil {
		return err
	}
	if slices.Contains(parts, partMany) || slices.Contains(parts, partHandoff) {
		for _, n := range res.Opts.Primaries {
			d, err := startCluster(n)
			if err != nil {
				return err
			}
			e.clusters = append(e.clusters, d)
		}
	}
	info, err := e.single.nodes[0].conn.Info("server")
	if err != nil {
		return err
	}
	load := res.Env.LoadBefore
	res.Env = machine.Environment(info["redis_version"])
	res.Env.LoadBefore = load
	res.Parts = parts
	e.cores.wake()
	steps := map[string]func(context.Context, *env, *Results) error{
		partCycle: measureCycle, partMany: measureMany, partHandoff: measureHandoff, partLatency: measureLatency,
	}
	for _, p := range parts {
		start := time.Now()
		logf("%s …", p)
		if err := steps[p](ctx, e, res); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		logf("%s: done in %v", p, time.Since(start).Round(time.Second))
	}
	res.Env.Awake, res.Env.AwakeNote = e.cores.note == "", e.cores.note
	return nil
}
