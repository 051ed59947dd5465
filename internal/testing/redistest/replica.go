package redistest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lockbridge/lockbridge/internal/protocol/resp"
)

const (
	replicaSyncWait   = 20 * time.Second
	replicaCmdTimeout = 5 * time.Second
)

// Replicated is a primary redis-server and one replica of it, both on
// loopback with persistence off: what a failover looks like to a lock.
type Replicated struct {
	Primary *Server
	Replica *Server // started with --replicaof Primary
}

// StartReplicated starts a primary and a replica of it (redis-server
// --replicaof), and returns once the replica's link is up and it has
// caught up with the primary. Both are stopped when the test finishes.
//
// A restart of the replica (Server.Restart) makes it a replica of the
// primary's address again, with an empty dataset until it has synced.
func StartReplicated(tb testing.TB) *Replicated {
	tb.Helper()
	bin := serverBinary(tb)
	r := &Replicated{Primary: newServer(tb, bin, false)}
	// Sync at once rather than after the default 5 s of waiting for more
	// replicas.
	r.Primary.extra = []string{"--repl-diskless-sync-delay", "0"}
	if err := r.Primary.launch(); err != nil {
		tb.Fatalf("redistest: starting a primary: %v\n%s", err, r.Primary.logReport())
	}
	r.Replica = newServer(tb, bin, false)
	r.Replica.extra = []string{"--replicaof", "127.0.0.1", strconv.Itoa(r.Primary.portNum())}
	if err := r.Replica.launch(); err != nil {
		tb.Fatalf("redistest: starting a replica of %s: %v\n%s", r.Primary.Addr(), err, r.Replica.logReport())
	}
	r.Sync(tb)
	return r
}

// Sync returns once the replica has processed everything the primary has
// written so far (its link is up and its replication offset has reached
// the primary's, read just before), or fails the test after 20 s. Writes
// may go on meanwhile.
func (r *Replicated) Sync(tb testing.TB) {
	tb.Helper()
	deadline := time.Now().Add(replicaSyncWait)
	var last error
	for time.Now().Before(deadline) {
		ok, err := r.synced()
		if ok {
			return
		}
		last = err
		time.Sleep(pollInterval)
	}
	tb.Fatalf("redistest: replica %s did not catch up with %s within %v: %v\n%s",
		r.Replica.Addr(), r.Primary.Addr(), replicaSyncWait, last, r.Replica.logReport())
}

// synced compares the primary's master_repl_offset with the replica's
// processed offset.
func (r *Replicated) synced() (bool, error) {
	p, err := info(r.Primary.Addr(), "replication")
	if err != nil {
		return false, err
	}
	q, err := info(r.Replica.Addr(), "replication")
	if err != nil {
		return false, err
	}
	if q["master_link_status"] != "up" {
		return false, fmt.Errorf("replica link %q", q["master_link_status"])
	}
	// The replica has processed everything the primary had written when
	// it was asked (it may be further on already: writes go on).
	po, perr := strconv.ParseInt(p["master_repl_offset"], 10, 64)
	qo, qerr := strconv.ParseInt(q["slave_repl_offset"], 10, 64)
	if perr != nil || qerr != nil || qo < po {
		return false, fmt.Errorf("primary offset %s, replica offset %s", p["master_repl_offset"], q["slave_repl_offset"])
	}
	return true, nil
}

// Failover makes the replica the primary, as a failover after the loss of
// the primary does: it kills the primary (SIGKILL, a crash: it stays down),
// then sends
// REPLICAOF NO ONE to the replica. The replica keeps what it had received:
// call Sync first for a failover that loses nothing, or Detach and write
// on the primary before it for a failover to a replica that lags behind.
// Afterwards, talk to Replica.Addr().
func (r *Replicated) Failover(tb testing.TB) {
	tb.Helper()
	r.Primary.Kill()
	r.Replica.Resume()
	if err := r.replicaOf("NO", "ONE"); err != nil {
		tb.Fatalf("redistest: promoting replica %s: %v\n%s", r.Replica.Addr(), err, r.Replica.logReport())
	}
	deadline := time.Now().Add(replicaSyncWait)
	for {
		m, err := info(r.Replica.Addr(), "replication")
		if err == nil && m["role"] == "master" {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("redistest: replica %s is not a master after REPLICAOF NO ONE: %v %v", r.Replica.Addr(), m["role"], err)
		}
		time.Sleep(pollInterval)
	}
}

// Rejoin brings back the primary that Failover killed as a replica of the
// promoted one, and swaps the roles: afterwards Primary is the promoted
// server and Replica the old primary, restarted on its port with an empty
// dataset (persistence is off; a dump.rdb left by an earlier sync is
// removed first) and caught up — ready for the next Detach and Failover.
// Call it after Failover, from the test goroutine.
func (r *Replicated) Rejoin(tb testing.TB) {
	tb.Helper()
	old, cur := r.Primary, r.Replica
	if old.currentProc() != nil {
		tb.Fatalf("redistest: Rejoin: the old primary %s is still running (call Failover first)", old.Addr())
	}
	// The new primary syncs at once, and a restart of it later (as a
	// replica, by the next Rejoin) gets its arguments from there.
	if err := configSet(cur.Addr(), "repl-diskless-sync-delay", "0"); err != nil {
		tb.Fatalf("redistest: Rejoin: configuring %s: %v", cur.Addr(), err)
	}
	cur.opMu.Lock()
	cur.extra = []string{"--repl-diskless-sync-delay", "0"}
	cur.opMu.Unlock()
	old.opMu.Lock()
	old.extra = []string{"--repl-diskless-sync-delay", "0", "--replicaof", "127.0.0.1", strconv.Itoa(cur.portNum())}
	old.opMu.Unlock()
	if err := os.Remove(filepath.Join(old.dir, "dump.rdb")); err != nil && !errors.Is(err, os.ErrNotExist) {
		tb.Fatalf("redistest: Rejoin: %v", err)
	}
	old.Restart()
	r.Primary, r.Replica = cur, old
	r.Sync(tb)
}

// configSet sends CONFIG SET name value to the server at addr.
func configSet(addr, name, value string) error {
	c, err := resp.Dial(addr, replicaCmdTimeout)
	if err != nil {
		return err
	}
	defer c.Close()
	reply, err := c.Do("CONFIG", "SET", name, value)
	if err == nil && fmt.Sprint(reply) != "OK" {
		err = fmt.Errorf("CONFIG SET %s %s: unexpected reply %q", name, value, reply)
	}
	return err
}

// Detach cuts the replica off from the primary, as a network partition
// between them would: the replica is pointed at a loopback port nobody
// listens on (REPLICAOF), so it keeps the data it has but receives none of
// the primary's later writes, and lags behind more with each. (SIGSTOP
// does not do it: the primary's writes wait in the replica's socket buffer
// and are applied when it resumes.)
func (r *Replicated) Detach(tb testing.TB) {
	tb.Helper()
	port, err := reservePort()
	if err == nil {
		err = r.replicaOf("127.0.0.1", strconv.Itoa(port))
	}
	if err != nil {
		tb.Fatalf("redistest: detaching replica %s: %v", r.Replica.Addr(), err)
	}
}

// replicaOf sends REPLICAOF host port to the replica.
func (r *Replicated) replicaOf(host, port string) error {
	c, err := resp.Dial(r.Replica.Addr(), replicaCmdTimeout)
	if err != nil {
		return err
	}
	defer c.Close()
	reply, err := c.Do("REPLICAOF", host, port)
	if err == nil && (reply == nil || !strings.HasPrefix(fmt.Sprint(reply), "OK")) {
		err = fmt.Errorf("REPLICAOF %s %s: unexpected reply %q", host, port, reply)
	}
	return err
}

// info returns one INFO section of the server at addr as a map.
func info(addr, section string) (map[string]string, error) {
	c, err := resp.Dial(addr, probeTimeout)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	v, err := c.Do("INFO", section)
	if err != nil {
		return nil, err
	}
	text, _ := v.(string)
	return resp.ParseInfo(text), nil
}
