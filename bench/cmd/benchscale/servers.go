package main

import (
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/lockbridge/lockbridge/bench/internal/impls"
	"github.com/lockbridge/lockbridge/bench/internal/monitor"
	"github.com/lockbridge/lockbridge/bench/internal/redisserver"
)

// deployment is one Redis the scenarios run on: a single server, or a
// cluster of primaries.
type deployment struct {
	name      string
	primaries int      // 0: a single server, not in cluster mode
	addrs     []string // what clients connect to
	nodes     []*node  // the servers, for their statistics
	idle      []float64
	stop      func()
}

// node is one redis-server and a connection to it for INFO (its own INFO
// commands are left out of the counts).
type node struct {
	addr string
	conn *monitor.Conn
}

func startSingle() (*deployment, error) {
	srv, err := redisserver.Start()
	if err != nil {
		return nil, err
	}
	d := &deployment{name: "single server", addrs: []string{srv.Addr()}, stop: srv.Close}
	if err := d.connect([]string{srv.Addr()}); err != nil {
		srv.Close()
		return nil, err
	}
	return d, nil
}

func startCluster(n int) (*deployment, error) {
	c, err := redisserver.StartCluster(n)
	if err != nil {
		return nil, err
	}
	d := &deployment{name: fmt.Sprintf("cluster, %d primar%s", n, plural(n, "y", "ies")), primaries: n, addrs: c.Addrs(),
		stop: c.Close}
	if err := d.connect(c.Addrs()); err != nil {
		c.Close()
		return nil, err
	}
	return d, nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func (d *deployment) connect(addrs []string) error {
	for _, a := range addrs {
		conn, err := monitor.Dial(a)
		if err != nil {
			return err
		}
		d.nodes = append(d.nodes, &node{addr: a, conn: conn})
	}
	return nil
}

func (d *deployment) close() {
	for _, n := range d.nodes {
		_ = n.conn.Close()
	}
	d.stop()
}

// target returns a target on d with a go-redis client of its own, and the
// function closing that client.
func (d *deployment) target() (impls.Target, func()) {
	if d.primaries == 0 {
		c := impls.NewClient(d.addrs[0])
		return impls.On(c), func() { _ = c.Close() }
	}
	c := impls.NewClusterClient(d.addrs)
	return impls.OnCluster(c, d.addrs), func() { _ = c.Close() }
}

// snap is what one node reported at one time.
type snap struct {
	cpu   float64 // the process's CPU time so far, s (INFO cpu: user + sys)
	calls int64   // commands run so far, those of measuring and topology left out
	usec  int64   // their execution time, µs
	reads int64   // reads from client sockets so far (INFO stats total_reads_processed)
	stats map[string]monitor.CommandStat
}

// ignored are the commands of the measurement and of the clients'
// connection and topology upkeep, left out of the calls counted.
func ignored(cmd string) bool {
	for _, p := range []string{"INFO", "CLUSTER", "HELLO", "CLIENT", "COMMAND", "PING", "READONLY", "SCRIPT", "ECHO",
		"MONITOR"} {
		if cmd == p || strings.HasPrefix(cmd, p+"|") {
			return true
		}
	}
	return false
}

func (n *node) snap() (snap, error) {
	info, err := n.conn.Info("cpu")
	if err != nil {
		return snap{}, err
	}
	sys, err1 := strconv.ParseFloat(info["used_cpu_sys"], 64)
	user, err2 := strconv.ParseFloat(info["used_cpu_user"], 64)
	if err1 != nil || err2 != nil {
		return snap{}, fmt.Errorf("%s: INFO cpu: used_cpu_sys %q, used_cpu_user %q", n.addr, info["used_cpu_sys"],
			info["used_cpu_user"])
	}
	st, err := n.conn.CommandStats()
	if err != nil {
		return snap{}, err
	}
	stats, err := n.conn.Info("stats")
	if err != nil {
		return snap{}, err
	}
	reads, _ := strconv.ParseInt(stats["total_reads_processed"], 10, 64)
	s := snap{cpu: sys + user, stats: st, reads: reads}
	for cmd, c := range st {
		if !ignored(cmd) {
			s.calls += c.Calls
			s.usec += c.Usec
		}
	}
	return s, nil
}

// snaps reads every node of d.
func (d *deployment) snaps() ([]snap, error) {
	out := make([]snap, len(d.nodes))
	for i, n := range d.nodes {
		s, err := n.snap()
		if err != nil {
			return nil, err
		}
		out[i] = s
	}
	return out, nil
}

// measureIdle sets d.idle: each node's CPU seconds per second over window
// with no client but the measurement (redis-server's timers, the cluster
// bus), to subtract from what the scenarios cost.
func (d *deployment) measureIdle(window time.Duration) error {
	a, err := d.snaps()
	if err != nil {
		return err
	}
	start := time.Now()
	time.Sleep(window)
	b, err := d.snaps()
	if err != nil {
		return err
	}
	el := time.Since(start).Seconds()
	d.idle = make([]float64, len(a))
	for i := range a {
		d.idle[i] = (b[i].cpu - a[i].cpu) / el
	}
	return nil
}

// processCPU is this process's CPU time so far (user + system), s.
func processCPU() float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// slotOwners returns, for a cluster, the index in d.nodes of the node
// serving each slot (CLUSTER SLOTS); nil for a single server.
func (d *deployment) slotOwners() ([]int, error) {
	if d.primaries == 0 {
		return nil, nil
	}
	v, err := d.nodes[0].conn.Do("CLUSTER", "SLOTS")
	if err != nil {
		return nil, err
	}
	byAddr := map[string]int{}
	for i, n := range d.nodes {
		byAddr[n.addr] = i
	}
	owners := make([]int, 16384)
	rows, _ := v.([]any)
	for _, r := range rows {
		f, _ := r.([]any)
		if len(f) < 3 {
			return nil, fmt.Errorf("CLUSTER SLOTS: unexpected row %v", r)
		}
		lo, _ := f[0].(int64)
		hi, _ := f[1].(int64)
		nf, _ := f[2].([]any)
		if len(nf) < 2 {
			return nil, fmt.Errorf("CLUSTER SLOTS: unexpected node %v", f[2])
		}
		host, _ := nf[0].(string)
		port, _ := nf[1].(int64)
		if host == "" {
			host = "127.0.0.1" // a node that met no other does not know its address
		}
		idx, ok := byAddr[fmt.Sprintf("%s:%d", host, port)]
		if !ok {
			return nil, fmt.Errorf("CLUSTER SLOTS: unknown node %s:%d", host, port)
		}
		for s := lo; s <= hi; s++ {
			owners[s] = idx
		}
	}
	return owners, nil
}
