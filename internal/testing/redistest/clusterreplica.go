package redistest

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

// AddReplica starts one more cluster-enabled redis-server, joins it to the
// cluster and makes it a replica of node i (CLUSTER REPLICATE), and returns
// once the replica's link is up and every node lists it. It is stopped when
// the test finishes.
func (c *Cluster) AddReplica(tb testing.TB, i int) *Server {
	tb.Helper()
	r := startServers(tb, 1, true)[0]
	id, err := command(c.nodes[i].Addr(), "CLUSTER", "MYID")
	if err != nil {
		tb.Fatalf("redistest: CLUSTER MYID: %v", err)
	}
	if _, err := command(r.Addr(), "CLUSTER", "MEET", "127.0.0.1", strconv.Itoa(c.nodes[i].portNum())); err != nil {
		tb.Fatalf("redistest: CLUSTER MEET: %v", err)
	}
	deadline := time.Now().Add(clusterReadyWait)
	for {
		_, err = command(r.Addr(), "CLUSTER", "REPLICATE", fmt.Sprint(id))
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			tb.Fatalf("redistest: CLUSTER REPLICATE: %v", err)
		}
		time.Sleep(pollInterval)
	}
	for {
		inf, err := info(r.Addr(), "replication")
		ok := err == nil && inf["master_link_status"] == "up"
		if ok {
			for _, n := range c.nodes {
				v, err := command(n.Addr(), "CLUSTER", "NODES")
				s, _ := v.(string)
				if err != nil || !strings.Contains(s, r.Addr()) || !strings.Contains(s, "slave") {
					ok = false
				}
			}
		}
		if ok {
			return r
		}
		if time.Now().After(deadline) {
			tb.Fatalf("redistest: replica %s not ready: %v %v", r.Addr(), err, inf)
		}
		time.Sleep(pollInterval)
	}
}
