package main

import (
	"time"

	"github.com/lockbridge/lockbridge/bench/internal/machine"
)

// Results is everything measured; it is also written as JSON.
type Results struct {
	Env     machine.Env
	Opts    Options
	Quick   bool
	Parts   []string
	Elapsed time.Duration
	Cycle   *CycleResult   `json:",omitempty"`
	Many    *ManyResult    `json:",omitempty"`
	Handoff *HandoffResult `json:",omitempty"`
	Latency *LatencyResult `json:",omitempty"`
}

// PairRow is one implementation's uncontended cycle beside its client's
// floor: per round, the mean ns per cycle of each, their cycles run in turn.
type PairRow struct {
	ID, Name, Client string
	Ns, FloorNs      []float64
}

// CycleResult is the uncontended cycle on one local server.
type CycleResult struct {
	// Regimes: the cores kept awake, then free to halt; their rounds
	// interleaved.
	Regimes []Regime
	Costs   []CostRow
	// AwakeNote says why the cores could not be kept awake ("" when they
	// were).
	AwakeNote string
}

// Regime is the cycle measured in one state of the machine's idle cores,
// paired one way.
type Regime struct {
	Name  string
	Awake bool
	// Blocks: each pair is two blocks one after the other (scenario.Blocks),
	// not cycles in turn.
	Blocks bool
	PingNs []float64 // per round: ns per PING (go-redis)
	Rows   []PairRow
}

// CostRow is where one implementation's uncontended cycle goes.
type CostRow struct {
	ID, Name, Client string
	RoundTrips       float64 // commands sent per cycle (MONITOR)
	Sent             string
	ExecUs           float64 // server: execution of the commands sent, µs per cycle (commandstats)
	ServerCPUUs      float64 // server: process CPU per cycle (INFO cpu), one goroutine
	ClientCPUUs      float64 // this process's CPU per cycle, 64 goroutines keeping the cores busy
	ServerCPUBusyUs  float64 // server CPU per cycle in that same busy pass
	Allocs, Bytes    float64
}

// ManyResult is the many-locks scenario on each deployment.
type ManyResult struct {
	Deployments []DeploymentInfo
	Rows        []ManyRow
}

// DeploymentInfo describes one deployment of the many-locks scenario.
type DeploymentInfo struct {
	Name      string
	Primaries int       // 0: a single server
	IdleCPU   []float64 // per node: CPU s per s with no client
	// KeyShare is, per key count, the share of the lock keys (and of
	// rueidislock's) each node serves, by their hash slots.
	KeyShare    map[int][]float64
	RueidisKeys map[int][]float64
	// NamespaceNode is the node serving the migrate namespace's slot.
	NamespaceNode int
}

// ManyRow is one implementation on one deployment with one key count.
type ManyRow struct {
	ID, Name, Client string
	Keys             int
	Deployment       int
	Rounds           []ManyRound
}

// ManyRound is one run of the many-locks scenario.
type ManyRound struct {
	Cycles, Busy int64
	Elapsed      time.Duration
	ServerCPU    []float64 // per node: CPU s used during the run, idle not subtracted
	Calls        []int64   // per node: commands run
	Reads        []int64   // per node: reads from client sockets
	ClientCPU    float64   // this process's CPU s
}

// HandoffResult is the hand-off on one key with many waiters.
type HandoffResult struct {
	Rows []HandoffRow
}

// HandoffRow is one implementation, deployment and number of waiters.
type HandoffRow struct {
	ID, Name, Client string
	Deployment       string
	Primaries        int
	Waiters          int
	CyclesPerSec     []float64 // per round
	P50, P99         float64   // hand-off, ns, over all rounds
	WaitP50, WaitP99 float64   // a Lock call's wait, ns
	WaitMax          float64
	Samples          int
	Violations       int
	GaveUp           int
	Early            int
	// CmdsPerCycle is the commands the server ran per lock cycle
	// (commandstats, scripts' inner commands included).
	CmdsPerCycle float64
	// ClientCPUUs and ServerCPUUs are this process's and the servers' CPU
	// time per lock cycle (the hold's busy work included in the former).
	ClientCPUUs, ServerCPUUs float64
	// ByName breaks CmdsPerCycle down by command ("SET 5.4 + …"); the
	// connection set-up commands (HELLO, CLIENT) are counted here too.
	ByName string
}

// LatencyResult is the scenarios through a proxy adding round-trip time.
type LatencyResult struct {
	Levels []LatencyLevel
}

// LatencyLevel is one added round trip.
type LatencyLevel struct {
	RTT     time.Duration // asked of the proxy
	PingNs  []float64     // PINGs through the proxy, ns each
	Cycle   []PairRow
	Handoff []HandoffRow
	Many    []ManyRow
}
