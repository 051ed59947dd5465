package main

import (
	"bytes"
	"encoding/xml"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge/bench/internal/impls"
)

// manyRound is one run that used cpu seconds on each node for cycles
// acquisitions in one second, running calls commands on each node.
func manyRound(cycles int64, cpu []float64, calls []int64) ManyRound {
	return ManyRound{Cycles: cycles, Elapsed: time.Second, ServerCPU: cpu, Calls: calls, Reads: calls, ClientCPU: 0.5}
}

// sample is a run of modern and the floor on one server and a 3-primary
// cluster: modern's CPU per acquisition on the cluster is ratio × its
// single-server figure, and its commands spread as calls.
func sample(ratio float64, calls []int64) *Results {
	deps := []DeploymentInfo{
		{Name: "single server", IdleCPU: []float64{0.001}},
		{Name: "cluster, 3 primaries", Primaries: 3, IdleCPU: []float64{0.001, 0.001, 0.001},
			KeyShare: map[int][]float64{1000: {0.33, 0.34, 0.33}}, RueidisKeys: map[int][]float64{1000: {0.33, 0.34, 0.33}}},
	}
	row := func(id string, d int, r ManyRound) ManyRow {
		im, _ := impls.ByID(id)
		return ManyRow{ID: id, Name: im.Name, Client: im.ClientName(), Keys: 1000, Deployment: d, Rounds: []ManyRound{r}}
	}
	// 10,000 acquisitions: 0.101 s of CPU (0.001 idle) is 10 µs each.
	single := manyRound(10_000, []float64{0.101}, []int64{40_000})
	per := 0.1 * ratio / 3
	cluster := manyRound(10_000, []float64{per + 0.001, per + 0.001, per + 0.001}, calls)
	return &Results{
		Opts: defaults(),
		Many: &ManyResult{Deployments: deps, Rows: []ManyRow{
			row(impls.Floor.ID, 0, single), row(impls.Floor.ID, 1, cluster),
			row(impls.Modern.ID, 0, single), row(impls.Modern.ID, 1, cluster),
		}},
	}
}

func goalStatus(t *testing.T, res *Results, prefix string) goal {
	t.Helper()
	r := &report{res: res}
	for _, g := range r.goalList() {
		if strings.HasPrefix(g.what, prefix) {
			return g
		}
	}
	t.Fatalf("no goal %q", prefix)
	return goal{}
}

func TestManyGoals(t *testing.T) {
	even := []int64{13_000, 13_300, 13_700}
	for _, tc := range []struct {
		name        string
		ratio       float64
		calls       []int64
		cpu, spread string
	}{
		{"within both", 1.05, even, statusMet, statusMet},
		{"CPU over 1.1×", 1.5, even, statusMissed, statusMet},
		{"a hot primary", 1.0, []int64{10_000, 10_000, 20_000}, statusMet, statusMissed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := sample(tc.ratio, tc.calls)
			g := goalStatus(t, res, "server CPU per acquisition on a cluster of 3 primaries")
			require.Equal(t, tc.cpu, g.status, g.measured)
			g = goalStatus(t, res, "load on each of 3 primaries")
			require.Equal(t, tc.spread, g.status, g.measured)
		})
	}
}

func TestServerUsSubtractsIdle(t *testing.T) {
	res := sample(2, []int64{1, 1, 1})
	m := res.Many
	require.InDeltaSlice(t, []float64{10}, m.row(impls.Modern.ID, 1000, 0).serverUs(m.Deployments[0]), 1e-9)
	require.InDeltaSlice(t, []float64{20}, m.row(impls.Modern.ID, 1000, 1).serverUs(m.Deployments[1]), 1e-9)
	require.InDeltaSlice(t, []float64{2}, clusterRatios(m, impls.Modern.ID, 1000, 1), 1e-9)
}

// TestChartsAreSVG: every chart is well-formed XML with an svg root.
func TestChartsAreSVG(t *testing.T) {
	res := sample(1.2, []int64{10, 11, 12})
	res.Handoff = &HandoffResult{Rows: []HandoffRow{{Name: "lockbridge modern", Deployment: "single server", Waiters: 8,
		WaitP50: 2e6, WaitP99: 9e6}}}
	res.Cycle = &CycleResult{Regimes: []Regime{{Name: "cores kept awake", Awake: true,
		Rows: []PairRow{{ID: impls.Modern.ID, Name: "lockbridge modern", Ns: []float64{45e3}, FloorNs: []float64{40e3}}}}}}
	charts := renderCharts(res)
	require.Len(t, charts, 3)
	for name, svg := range charts {
		d := xml.NewDecoder(bytes.NewReader(svg))
		var root string
		for {
			tok, err := d.Token()
			if err == io.EOF {
				break
			}
			require.NoError(t, err, name)
			if se, ok := tok.(xml.StartElement); ok && root == "" {
				root = se.Name.Local
			}
		}
		require.Equal(t, "svg", root, name)
	}
	md := markdown(res, map[string]string{chartMany: "x.svg"})
	require.Contains(t, md, "![server CPU per acquisition by deployment](x.svg)")
}
