package main

import (
	"fmt"
	"strings"

	"github.com/lockbridge/lockbridge/bench/internal/impls"
)

// many writes §S2: many locks on one server and on clusters.
func (r *report) many() {
	m := r.res.Many
	o := r.res.Opts
	r.p("### S2. Many locks on a cluster\n\n")
	r.p("%d goroutines, each taking and releasing a random key of %s with one attempt (`TryLock`), %d round(s) of %v "+
		"per implementation, key count and deployment. ",
		o.ManyWorkers, joinInts(manyKeyCounts(m), " or "), o.ManyRounds, o.ManyDur)
	r.p("Every implementation locks the same names, so they spread over a cluster's slots alike (rueidislock prefixes " +
		"its own, `rueidislock:0:`); migrate's derived modern key shares its legacy key's slot, modern's release channel " +
		"`{K}:released` its key's. ")
	r.p("The migrate lockers run a fixed phase (`WithPhase`) and heartbeat into the namespace `%s` (`WithNamespace`), "+
		"whose keys all live in one slot. ", "bench")
	r.p("**Server CPU per acquisition** is the CPU time of all the deployment's redis-servers during the run (INFO "+
		"cpu), less what each used idle (measured before, %s), ÷ the acquisitions. ", idleCell(m))
	r.p("\"÷ one server\": per round, that figure on the cluster ÷ on the single server (not in cluster mode); median " +
		"over the rounds.\n\n")
	if ref, ok := r.refs[chartMany]; ok {
		r.p("![server CPU per acquisition by deployment](%s)\n\n", ref)
	}
	for _, keys := range manyKeyCounts(m) {
		r.manyCPUTable(keys)
	}
	r.spreadTable()
}

func idleCell(m *ManyResult) string {
	var parts []string
	for _, d := range m.Deployments {
		total := 0.0
		for _, x := range d.IdleCPU {
			total += x
		}
		parts = append(parts, fmt.Sprintf("%s %.1f%% of a core", d.Name, 100*total))
	}
	return strings.Join(parts, ", ")
}

func joinInts(xs []int, sep string) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = thousands(x)
	}
	return strings.Join(parts, sep)
}

// manyCPUTable: per implementation, server CPU per acquisition on each
// deployment and the ratios to the single server.
func (r *report) manyCPUTable(keys int) {
	m := r.res.Many
	r.p("**%s keys** — server CPU µs per acquisition (in small print: acquisitions/s; client CPU µs per acquisition; "+
		"reads from client sockets per acquisition, all primaries together):\n\n| implementation | client |", thousands(keys))
	for _, d := range m.Deployments {
		r.p(" %s |", d.Name)
	}
	for _, d := range m.Deployments[1:] {
		r.p(" ÷ one server, %d primar%s |", d.Primaries, plural(d.Primaries, "y", "ies"))
	}
	r.p("\n|---|---|%s%s\n", strings.Repeat("---:|", len(m.Deployments)), strings.Repeat("---:|", len(m.Deployments)-1))
	for _, id := range rowIDs(m) {
		first := m.row(id, keys, 0)
		if first == nil {
			continue
		}
		name := first.Name
		if isOurs(id) {
			name = "**" + name + "**"
		}
		r.p("| %s | %s |", name, first.Client)
		for di, d := range m.Deployments {
			row := m.row(id, keys, di)
			r.p(" %.1f <sub>%.0f/s; %.1f; %.2f</sub> |", median(row.serverUs(d)), median(row.rate()), median(row.clientUs()),
				median(row.readsPerAcq()))
		}
		for di := range m.Deployments[1:] {
			r.p(" %s |", ratioCell(clusterRatios(m, id, keys, di+1)))
		}
		r.p("\n")
	}
	r.p("\n")
}

// spreadTable: how the commands spread over each cluster's primaries.
func (r *report) spreadTable() {
	m := r.res.Many
	type col struct{ di, keys int }
	var cols []col
	for di, d := range m.Deployments {
		for _, keys := range manyKeyCounts(m) {
			if d.Primaries >= 2 {
				cols = append(cols, col{di, keys})
			}
		}
	}
	if len(cols) == 0 {
		return
	}
	r.p("**How the load spreads.** On each cluster of two primaries or more, the primary furthest from the mean, above " +
		"(+) or below (−) it as a share of the mean: in commands run (commandstats, scripts' inner commands included) · in " +
		"CPU time (idle subtracted), over all rounds. ")
	r.p("The first row is the keys themselves: how many of the names hash to each primary, which a perfectly even load " +
		"follows. ")
	r.p("The last column is the primary serving the migrate namespace's slot: its commands above or below the mean of " +
		"the other primaries'.\n\n| implementation |")
	for _, c := range cols {
		r.p(" %d primaries, %s keys |", m.Deployments[c.di].Primaries, thousands(c.keys))
	}
	r.p(" namespace primary, %d primaries, %s keys |\n|---|%s---:|\n| *the keys* |",
		m.Deployments[cols[len(cols)-1].di].Primaries, thousands(cols[len(cols)-1].keys), strings.Repeat("---:|", len(cols)))
	for _, c := range cols {
		r.p(" %s |", pct(maxDev(m.Deployments[c.di].KeyShare[c.keys])))
	}
	r.p(" |\n")
	for _, id := range rowIDs(m) {
		first := m.row(id, cols[0].keys, cols[0].di)
		r.p("| %s |", first.Name)
		var calls []float64
		for _, c := range cols {
			row := m.row(id, c.keys, c.di)
			calls = row.nodeCalls()
			r.p(" %s · %s", pct(maxDev(calls)), pct(maxDev(row.nodeCPU(m.Deployments[c.di]))))
			if row.ID == impls.RueidisLock.ID {
				r.p(" <sub>its keys %s</sub>", pct(maxDev(row.keyShare(m.Deployments[c.di]))))
			}
			r.p(" |")
		}
		r.p(" %s |\n", nsExcess(calls, m.Deployments[cols[len(cols)-1].di].NamespaceNode))
	}
	r.p("\nrueidislock's keys are its own names (`rueidislock:0:` + name); how those spread is in small print.\n\n")
}

// nsExcess is node ns's commands over the mean of the other nodes', as a
// share of that mean.
func nsExcess(calls []float64, ns int) string {
	if ns < 0 || ns >= len(calls) || len(calls) < 2 {
		return "–"
	}
	others := 0.0
	for i, c := range calls {
		if i != ns {
			others += c / float64(len(calls)-1)
		}
	}
	if others == 0 {
		return "–"
	}
	return pct(calls[ns]/others - 1)
}
