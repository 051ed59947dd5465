package main

import "github.com/lockbridge/lockbridge/bench/internal/impls"

// serverUs is, per round, the server CPU per acquisition in µs, summed over
// the nodes, each node's idle CPU over the run subtracted.
func (r ManyRow) serverUs(info DeploymentInfo) []float64 {
	out := make([]float64, 0, len(r.Rounds))
	for _, rd := range r.Rounds {
		if rd.Cycles == 0 {
			continue
		}
		total := 0.0
		for i, c := range rd.ServerCPU {
			idle := 0.0
			if i < len(info.IdleCPU) {
				idle = info.IdleCPU[i] * rd.Elapsed.Seconds()
			}
			total += c - idle
		}
		out = append(out, total*1e6/float64(rd.Cycles))
	}
	return out
}

// clientUs is, per round, this process's CPU per acquisition in µs.
func (r ManyRow) clientUs() []float64 {
	out := make([]float64, 0, len(r.Rounds))
	for _, rd := range r.Rounds {
		if rd.Cycles > 0 {
			out = append(out, rd.ClientCPU*1e6/float64(rd.Cycles))
		}
	}
	return out
}

// readsPerAcq is, per round, the reads from client sockets per acquisition,
// all nodes together: how many commands each read brings in (pipelining,
// concurrency per node) drives a server's CPU per command.
func (r ManyRow) readsPerAcq() []float64 {
	out := make([]float64, 0, len(r.Rounds))
	for _, rd := range r.Rounds {
		if rd.Cycles == 0 {
			continue
		}
		var n int64
		for _, x := range rd.Reads {
			n += x
		}
		out = append(out, float64(n)/float64(rd.Cycles))
	}
	return out
}

// rate is, per round, the acquisitions per second.
func (r ManyRow) rate() []float64 {
	out := make([]float64, 0, len(r.Rounds))
	for _, rd := range r.Rounds {
		if rd.Elapsed > 0 {
			out = append(out, float64(rd.Cycles)/rd.Elapsed.Seconds())
		}
	}
	return out
}

// nodeCalls are the commands each node ran, over all rounds.
func (r ManyRow) nodeCalls() []float64 {
	var out []float64
	for _, rd := range r.Rounds {
		if out == nil {
			out = make([]float64, len(rd.Calls))
		}
		for i, c := range rd.Calls {
			out[i] += float64(c)
		}
	}
	return out
}

// nodeCPU is the CPU each node used over all rounds, idle subtracted.
func (r ManyRow) nodeCPU(info DeploymentInfo) []float64 {
	var out []float64
	for _, rd := range r.Rounds {
		if out == nil {
			out = make([]float64, len(rd.ServerCPU))
		}
		for i, c := range rd.ServerCPU {
			idle := 0.0
			if i < len(info.IdleCPU) {
				idle = info.IdleCPU[i] * rd.Elapsed.Seconds()
			}
			out[i] += c - idle
		}
	}
	return out
}

// keyShare is the share of the row's keys each node serves.
func (r ManyRow) keyShare(info DeploymentInfo) []float64 {
	if r.ID == impls.RueidisLock.ID {
		return info.RueidisKeys[r.Keys]
	}
	return info.KeyShare[r.Keys]
}

// manyRow finds the row of id with keys on deployment d.
func (m *ManyResult) row(id string, keys, d int) *ManyRow {
	for i := range m.Rows {
		if r := &m.Rows[i]; r.ID == id && r.Keys == keys && r.Deployment == d {
			return r
		}
	}
	return nil
}

// ourIDs are lockbridge's implementations among ids (not floors, not peers).
func isOurs(id string) bool {
	switch id {
	case impls.Floor.ID, impls.FloorRueidis.ID, impls.BSM.ID, impls.RueidisLock.ID:
		return false
	}
	return true
}
