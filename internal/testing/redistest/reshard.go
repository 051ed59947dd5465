package redistest

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/lockbridge/lockbridge/internal/protocol/resp"
)

// MoveEmptySlot hands slot, which must hold no keys, from the master
// serving it to the next node (in Nodes order), telling every node with
// CLUSTER SETSLOT … NODE, and returns the new owner. A client that read the
// slot map before gets MOVED for the slot's keys afterwards: what a
// resharding looks like to it.
func (c *Cluster) MoveEmptySlot(tb testing.TB, slot int) *Server {
	tb.Helper()
	m := c.BeginSlotMove(tb, slot)
	m.Finish(tb)
	return m.To()
}

// MoveSlot moves slot with its keys from the master serving it to the next
// node (in Nodes order), as redis-cli --cluster reshard does — see
// BeginSlotMove, SlotMove.MoveKeys and SlotMove.Finish — and returns the
// new owner and how many keys it migrated. Clients may use the slot
// meanwhile: they get ASK and TRYAGAIN while it migrates, MOVED after.
func (c *Cluster) MoveSlot(tb testing.TB, slot int) (*Server, int) {
	tb.Helper()
	m := c.BeginSlotMove(tb, slot)
	n := m.MoveKeys(tb)
	m.Finish(tb)
	return m.To(), n
}

// SlotMove is one slot being moved, with its keys, from one master to
// another, in the three steps of a resharding, which a test may space out
// to keep the slot migrating while clients use it:
//
//   - BeginSlotMove: CLUSTER SETSLOT … IMPORTING on the new owner, then
//     MIGRATING on the old one. The old owner still serves the keys it has;
//     for a key it does not have it answers ASK (the client sends ASKING,
//     then the command, to the new owner), and for a command with several
//     keys of which it has some, TRYAGAIN.
//   - MoveKeys: MIGRATE every key of the slot to the new owner, a batch at a
//     time, until the old owner has none.
//   - Finish: CLUSTER SETSLOT … NODE on the new owner, the old one and the
//     third node, in that order. The old owner then answers MOVED and drops
//     its sharded pub/sub subscribers of the slot (SUNSUBSCRIBE sent by the
//     server).
//
// BeginSlotMove reports failure with tb.Fatalf; MoveKeys and Finish with
// tb.Errorf.
type SlotMove struct {
	c          *Cluster
	slot       int
	from, to   int
	ids        []string
	finished   bool
	batch      int
	migrateFor time.Duration
}

// migrateBatch is how many keys one MIGRATE moves.
const migrateBatch = 100

// BeginSlotMove starts moving slot from the master serving it to the next
// node (in Nodes order): see SlotMove.
func (c *Cluster) BeginSlotMove(tb testing.TB, slot int) *SlotMove {
	tb.Helper()
	m := &SlotMove{c: c, slot: slot, batch: migrateBatch, migrateFor: clusterCmdTimeout}
	ids, err := c.ids()
	if err != nil {
		tb.Fatalf("redistest: %v", err)
	}
	m.ids = ids
	if m.from, err = c.owner(slot); err != nil {
		tb.Fatalf("redistest: %v", err)
	}
	m.to = (m.from + 1) % len(c.nodes)
	s := strconv.Itoa(slot)
	// The importing side first, as redis-cli --cluster does: a client sent
	// from the old owner by ASK must find the new one ready.
	m.run(tb, m.to, "CLUSTER", "SETSLOT", s, "IMPORTING", ids[m.from])
	m.run(tb, m.from, "CLUSTER", "SETSLOT", s, "MIGRATING", ids[m.to])
	return m
}

// From returns the slot's old owner.
func (m *SlotMove) From() *Server { return m.c.nodes[m.from] }

// To returns the slot's new owner.
func (m *SlotMove) To() *Server { return m.c.nodes[m.to] }

// Slot returns the slot being moved.
func (m *SlotMove) Slot() int { return m.slot }

// MoveKeys migrates every key of the slot from the old owner to the new
// one and returns how many it moved. Keys written meanwhile land on the new
// owner (the old one answers ASK for a key it does not have), so it ends
// once the old owner has none left. It reports failure with tb.Errorf, so
// it may be called from any goroutine.
func (m *SlotMove) MoveKeys(tb testing.TB) int {
	tb.Helper()
	n, err := m.moveKeys()
	if err != nil {
		tb.Errorf("redistest: migrating slot %d: %v", m.slot, err)
	}
	return n
}

func (m *SlotMove) moveKeys() (int, error) {
	from, to := m.c.nodes[m.from], m.c.nodes[m.to]
	conn, err := resp.Dial(from.Addr(), m.migrateFor)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	s, batch := strconv.Itoa(m.slot), strconv.Itoa(m.batch)
	ms := strconv.Itoa(int(m.migrateFor.Milliseconds()))
	moved := 0
	for {
		r, err := conn.Do("CLUSTER", "GETKEYSINSLOT", s, batch)
		if err != nil {
			return moved, fmt.Errorf("CLUSTER GETKEYSINSLOT on %s: %w", from.Addr(), err)
		}
		keys := asSlice(r)
		if len(keys) == 0 {
			return moved, nil
		}
		args := []string{"MIGRATE", "127.0.0.1", strconv.Itoa(to.portNum()), "", "0", ms, "KEYS"}
		for _, k := range keys {
			ks, _ := k.(string)
			args = append(args, ks)
		}
		r, err = conn.Do(args...)
		if err != nil {
			return moved, fmt.Errorf("MIGRATE to %s: %w", to.Addr(), err)
		}
		if r == "OK" {
			moved += len(keys) // NOKEY: they expired or were deleted meanwhile
		}
	}
}

// MigrateKeys migrates the named keys of the slot, and only those, from the
// old owner to the new one (one MIGRATE … KEYS): a move caught half-way, a
// command with several keys finding some on each node (TRYAGAIN). Keys the
// old owner does not have are skipped. It reports failure with tb.Errorf.
func (m *SlotMove) MigrateKeys(tb testing.TB, keys ...string) {
	tb.Helper()
	args := []string{"MIGRATE", "127.0.0.1", strconv.Itoa(m.c.nodes[m.to].portNum()), "", "0",
		strconv.Itoa(int(m.migrateFor.Milliseconds())), "KEYS"}
	if _, err := command(m.c.nodes[m.from].Addr(), append(args, keys...)...); err != nil {
		tb.Errorf("redistest: MIGRATE %q to %s: %v", keys, m.c.nodes[m.to].Addr(), err)
	}
}

// Finish ends the move: every node learns that the new owner serves the
// slot (CLUSTER SETSLOT … NODE, the new owner first, then the old one). The
// old owner must hold none of the slot's keys any more (MoveKeys first):
// it refuses to hand over a slot it has keys in — unless the new owner's
// gossip reached it first, when it drops them. It
// reports failure with tb.Errorf, so it may be called from any goroutine (not
// from two at once), and does nothing the second time.
func (m *SlotMove) Finish(tb testing.TB) {
	tb.Helper()
	if m.finished {
		return
	}
	m.finished = true
	s := strconv.Itoa(m.slot)
	order := []int{m.to, m.from}
	for i := range m.c.nodes {
		if i != m.to && i != m.from {
			order = append(order, i)
		}
	}
	for _, i := range order {
		if _, err := command(m.c.nodes[i].Addr(), "CLUSTER", "SETSLOT", s, "NODE", m.ids[m.to]); err != nil {
			tb.Errorf("redistest: CLUSTER SETSLOT %d NODE on %s: %v", m.slot, m.c.nodes[i].Addr(), err)
		}
	}
}

// run sends one command to node i or fails the test.
func (m *SlotMove) run(tb testing.TB, i int, args ...string) {
	tb.Helper()
	if _, err := command(m.c.nodes[i].Addr(), args...); err != nil {
		tb.Fatalf("redistest: %v on %s: %v", args, m.c.nodes[i].Addr(), err)
	}
}

// Owner returns the master serving slot, as node 0 sees it.
func (c *Cluster) Owner(tb testing.TB, slot int) *Server {
	tb.Helper()
	i, err := c.owner(slot)
	if err != nil {
		tb.Fatalf("redistest: %v", err)
	}
	return c.nodes[i]
}

// ids returns every node's cluster id, in Nodes order.
func (c *Cluster) ids() ([]string, error) {
	ids := make([]string, len(c.nodes))
	for i, n := range c.nodes {
		id, err := command(n.Addr(), "CLUSTER", "MYID")
		if err != nil {
			return nil, fmt.Errorf("CLUSTER MYID on %s: %w", n.Addr(), err)
		}
		ids[i], _ = id.(string)
	}
	return ids, nil
}

// owner returns the index of the node serving slot, as node 0 sees it.
func (c *Cluster) owner(slot int) (int, error) {
	slots, err := command(c.nodes[0].Addr(), "CLUSTER", "SLOTS")
	if err != nil {
		return -1, fmt.Errorf("CLUSTER SLOTS: %w", err)
	}
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
				return i, nil
			}
		}
	}
	return -1, fmt.Errorf("no node serves slot %d", slot)
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
