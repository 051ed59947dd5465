package redistest

import (
	"strconv"
	"testing"

	"github.com/lockbridge/lockbridge/internal/protocol/resp"
)

// MoveEmptySlot hands slot, which must hold no keys, from the master
// serving it to the next node (in Nodes order), telling every node with
// CLUSTER SETSLOT … NODE, and returns the new owner. A client that read the
// slot map before gets MOVED for the slot's keys afterwards: what a
// resharding looks like to it.
func (c *Cluster) MoveEmptySlot(tb testing.TB, slot int) *Server {
	tb.Helper()
	ids := make([]string, len(c.nodes))
	for i, n := range c.nodes {
		id, err := command(n.Addr(), "CLUSTER", "MYID")
		if err != nil {
			tb.Fatalf("redistest: CLUSTER MYID on %s: %v", n.Addr(), err)
		}
		ids[i], _ = id.(string)
	}
	slots, err := command(c.nodes[0].Addr(), "CLUSTER", "SLOTS")
	if err != nil {
		tb.Fatalf("redistest: CLUSTER SLOTS: %v", err)
	}
	owner := -1
	for _, r := range asSlice(slots) {
		rr := asSlice(r)
		if len(rr) < 3 {
			continue
		}
		first, _ := rr[0].(int64)
		last, _ := rr[1].(int64)
		if int64(slot) < first || int64(slot) > last {
			continue
		}
		port, _ := asSlice(rr[2])[1].(int64)
		for i, n := range c.nodes {
			if n.portNum() == int(port) {
				owner = i
			}
		}
	}
	if owner < 0 {
		tb.Fatalf("redistest: no node serves slot %d", slot)
	}
	target := (owner + 1) % len(c.nodes)
	// The new owner first, as redis-cli --cluster does.
	for _, i := range []int{target, owner, (owner + 2) % len(c.nodes)} {
		if _, err := command(c.nodes[i].Addr(), "CLUSTER", "SETSLOT", strconv.Itoa(slot), "NODE", ids[target]); err != nil {
			tb.Fatalf("redistest: CLUSTER SETSLOT %d NODE on %s: %v", slot, c.nodes[i].Addr(), err)
		}
	}
	return c.nodes[target]
}

// command sends one command on a connection of its own.
func command(addr string, args ...string) (any, error) {
	conn, err := resp.Dial(addr, clusterCmdTimeout)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	return conn.Do(args...)
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}
