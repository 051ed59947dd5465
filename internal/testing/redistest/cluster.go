package redistest

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lockbridge/lockbridge/internal/protocol/resp"
)

const (
	clusterSize        = 3
	clusterSlots       = 16384
	clusterReadyWait   = 20 * time.Second
	clusterCmdTimeout  = 5 * time.Second
	clusterPollTimeout = time.Second
)

// Cluster is a Redis Cluster of masters (no replicas) on loopback: three
// (StartCluster) or any number from 1 to 16 (StartClusterN).
type Cluster struct {
	nodes []*Server
}

// StartCluster starts three cluster-enabled redis-servers, gives them the
// slot ranges 0-5460, 5461-10922 and 10923-16383, joins them with CLUSTER
// MEET, and returns only when CLUSTER INFO reports cluster_state:ok, three
// known nodes and all 16384 slots assigned on every node. The nodes are
// stopped when the test finishes.
func StartCluster(tb testing.TB) *Cluster {
	tb.Helper()
	return StartClusterN(tb, clusterSize)
}

// StartClusterN is StartCluster with n masters, 1 ≤ n ≤ 16, the slots split
// into n ranges of nearly equal size in node order, as redis-cli --cluster
// create splits them.
func StartClusterN(tb testing.TB, n int) *Cluster {
	tb.Helper()
	if n < 1 || n > 16 {
		tb.Fatalf("redistest: StartClusterN(%d): n must be from 1 to 16", n)
	}
	c := &Cluster{nodes: startServers(tb, n, true)}
	if err := c.form(); err != nil {
		var logs []string
		for i, n := range c.nodes {
			logs = append(logs, fmt.Sprintf("node %d (%s):\n%s", i, n.Addr(), n.logReport()))
		}
		tb.Fatalf("redistest: forming a cluster of %v: %v\n%s", c.Addrs(), err, strings.Join(logs, "\n"))
	}
	return c
}

// Addrs returns the nodes' addresses, "127.0.0.1:PORT", in slot order: of
// three nodes, node 0 serves slots 0-5460, node 1 5461-10922 and node 2
// 10923-16383.
func (c *Cluster) Addrs() []string {
	addrs := make([]string, len(c.nodes))
	for i, n := range c.nodes {
		addrs[i] = n.Addr()
	}
	return addrs
}

// Nodes returns the nodes' servers, in the same order as Addrs.
func (c *Cluster) Nodes() []*Server {
	return append([]*Server(nil), c.nodes...)
}

// slotRanges are the first and last slots served by each of n nodes, as
// redis-cli --cluster create splits them: of three, 0-5460, 5461-10922 and
// 10923-16383.
func slotRanges(n int) [][2]int {
	per := float64(clusterSlots) / float64(n)
	out := make([][2]int, n)
	first, cursor := 0, 0.0
	for i := range out {
		last := int(math.Round(cursor + per - 1))
		if last > clusterSlots-1 || i == n-1 {
			last = clusterSlots - 1
		}
		out[i] = [2]int{first, last}
		first, cursor = last+1, cursor+per
	}
	return out
}

// form assigns slots, joins the nodes and waits for the cluster to be ok.
func (c *Cluster) form() error {
	conns := make([]*resp.Conn, len(c.nodes))
	defer func() {
		for _, conn := range conns {
			if conn != nil {
				conn.Close()
			}
		}
	}()
	ranges := slotRanges(len(c.nodes))
	for i, n := range c.nodes {
		conn, err := resp.Dial(n.Addr(), clusterCmdTimeout)
		if err != nil {
			return err
		}
		conns[i] = conn
		if err := addSlots(conn, ranges[i][0], ranges[i][1]); err != nil {
			return fmt.Errorf("node %d (%s): %w", i, n.Addr(), err)
		}
		// Distinct config epochs (as redis-cli --cluster create sets them)
		// spare the nodes resolving an epoch collision after MEET.
		if _, err := conn.Do("CLUSTER", "SET-CONFIG-EPOCH", strconv.Itoa(i+1)); err != nil {
			return fmt.Errorf("node %d (%s): CLUSTER SET-CONFIG-EPOCH: %w", i, n.Addr(), err)
		}
	}
	// Every node meets every other one directly, rather than learning about
	// them through gossip, which takes about a second longer.
	for i, conn := range conns {
		for _, n := range c.nodes[i+1:] {
			if _, err := conn.Do("CLUSTER", "MEET", "127.0.0.1", strconv.Itoa(n.portNum())); err != nil {
				return fmt.Errorf("node %d (%s): CLUSTER MEET %s: %w", i, c.nodes[i].Addr(), n.Addr(), err)
			}
		}
	}
	return c.waitOK()
}

// addSlots assigns slots first..last to the node, with CLUSTER ADDSLOTSRANGE
// (Redis >= 7.0) or else CLUSTER ADDSLOTS.
func addSlots(conn *resp.Conn, first, last int) error {
	_, err := conn.Do("CLUSTER", "ADDSLOTSRANGE", strconv.Itoa(first), strconv.Itoa(last))
	var re resp.Error
	if err == nil || !errors.As(err, &re) {
		return err
	}
	args := []string{"CLUSTER", "ADDSLOTS"}
	for s := first; s <= last; s++ {
		args = append(args, strconv.Itoa(s))
	}
	if _, err2 := conn.Do(args...); err2 != nil {
		return fmt.Errorf("CLUSTER ADDSLOTSRANGE: %v; CLUSTER ADDSLOTS: %w", err, err2)
	}
	return nil
}

// waitOK polls CLUSTER INFO on every node until all of them are ok.
func (c *Cluster) waitOK() error {
	deadline := time.Now().Add(clusterReadyWait)
	want := map[string]string{
		"cluster_state":          "ok",
		"cluster_slots_assigned": strconv.Itoa(clusterSlots),
		"cluster_slots_ok":       strconv.Itoa(clusterSlots),
		"cluster_known_nodes":    strconv.Itoa(len(c.nodes)),
		"cluster_size":           strconv.Itoa(len(c.nodes)),
	}
	for {
		err := c.checkInfo(want)
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("cluster not ok after %v: %w", clusterReadyWait, err)
		}
		time.Sleep(pollInterval)
	}
}

// checkInfo returns an error describing the first node whose CLUSTER INFO
// does not have the wanted values.
func (c *Cluster) checkInfo(want map[string]string) error {
	for i, n := range c.nodes {
		info, err := clusterInfo(n.Addr(), clusterPollTimeout)
		if err != nil {
			return fmt.Errorf("node %d (%s): CLUSTER INFO: %w", i, n.Addr(), err)
		}
		for k, v := range want {
			if info[k] != v {
				return fmt.Errorf("node %d (%s): CLUSTER INFO has %s:%s, want %s", i, n.Addr(), k, info[k], v)
			}
		}
	}
	return nil
}

// clusterInfo returns the fields of CLUSTER INFO from the node at addr.
func clusterInfo(addr string, timeout time.Duration) (map[string]string, error) {
	conn, err := resp.Dial(addr, timeout)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	reply, err := conn.Do("CLUSTER", "INFO")
	if err != nil {
		return nil, err
	}
	text, ok := reply.(string)
	if !ok {
		return nil, fmt.Errorf("unexpected CLUSTER INFO reply %#v", reply)
	}
	return resp.ParseInfo(text), nil
}
