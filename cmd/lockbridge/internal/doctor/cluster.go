package doctor

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/lockbridge/lockbridge/internal/protocol/resp"
)

// clusterSlots is the number of hash slots of a Redis Cluster.
const clusterSlots = 16384

// checkShardedPubSub: in a cluster, lockbridge publishes release and phase
// notices with SPUBLISH and listens with SSUBSCRIBE (Redis >= 7).
func checkShardedPubSub(ctx context.Context, r *run) (Finding, bool) {
	if !r.t.Client.Cluster() {
		return Finding{}, false
	}
	shards, err := r.shardsOf(ctx)
	if err != nil {
		return Finding{
			ID:       IDShardedPubSub,
			Severity: Unknown,
			Summary:  "could not read the slot map, so sharded pub/sub was not checked per master",
			Detail:   errText(err),
		}, true
	}
	var fs []Finding
	var addrs []string
	for _, sh := range shards {
		if sh.tag == "" {
			continue
		}
		_, err := r.do(ctx, r.t.Client, "SPUBLISH", channel(sh.tag), "doctor")
		fs = append(fs, shardedFinding(err))
		addrs = append(addrs, sh.addr)
	}
	if len(fs) == 0 {
		return Finding{ID: IDShardedPubSub, Severity: Unknown,
			Summary: "no master serves any slot: sharded pub/sub not checked"}, true
	}
	return merge(IDShardedPubSub, addrs, fs), true
}

func shardedFinding(err error) Finding {
	switch classifyErr(err) {
	case allowed:
		if err == nil {
			return Finding{Severity: OK, Summary: "sharded pub/sub works (SPUBLISH)"}
		}
	case deniedCommand, deniedChannel, deniedKey:
		return Finding{
			Severity: Unknown,
			Summary:  "this user may not SPUBLISH to the scratch channel, so sharded pub/sub could not be tested (see acl)",
			Detail:   errText(err),
		}
	case noAnswer:
		return Finding{Severity: Unknown, Summary: "SPUBLISH got no answer", Detail: errText(err)}
	}
	return Finding{
		Severity: Danger,
		Summary:  "no sharded pub/sub (SPUBLISH needs Redis 7): phase steps fail and release notices are lost",
		Detail: "In a cluster, lockbridge's scripts publish with SPUBLISH and its waiters listen with SSUBSCRIBE. " +
			"Without them a migrate phase step fails with an error after writing the phase, release notices are " +
			"lost and waiters poll. SPUBLISH answered: " + errText(err),
		Fix: "upgrade every node to Redis 7 or later",
	}
}

// checkClusterSlots: every slot must be served, or the locks whose keys
// hash there fail.
func checkClusterSlots(ctx context.Context, r *run) (Finding, bool) {
	if !r.t.Client.Cluster() {
		return Finding{}, false
	}
	var problems, seen []string
	var lastErr error
	read := 0
	for _, n := range r.t.Nodes {
		line, nodeProblems, err := nodeClusterInfo(ctx, r, n)
		if err != nil {
			lastErr = err
			continue
		}
		read++
		seen = append(seen, line)
		problems = append(problems, nodeProblems...)
	}
	covered := r.slotsCovered(ctx)
	if covered >= 0 && covered != clusterSlots {
		problems = append(problems, fmt.Sprintf("CLUSTER SLOTS covers %d of %d slots", covered, clusterSlots))
	}
	detail := strings.Join(seen, "\n")
	if read == 0 && covered < 0 {
		return Finding{
			ID:       IDClusterSlots,
			Severity: Unknown,
			Summary:  "could not read the cluster's state (CLUSTER INFO and CLUSTER SLOTS denied or unanswered)",
			Detail:   errText(lastErr),
			Fix:      "run doctor as a user allowed CLUSTER INFO, or check cluster_state by hand",
		}, true
	}
	if len(problems) > 0 {
		return Finding{
			ID:       IDClusterSlots,
			Severity: Danger,
			Summary:  "the cluster does not serve every slot: " + problems[0],
			Detail: "Locks whose keys hash to an unserved slot fail (CLUSTERDOWN), and a namespace whose keys hash " +
				"there cannot be read, so its lockers refuse to lock.\n" + strings.Join(problems, "\n") + "\n" + detail,
			Fix: "assign the missing slots or bring the failing masters back (redis-cli --cluster check / fix)",
		}, true
	}
	sum := fmt.Sprintf("all %d slots served by %s, cluster_state ok", clusterSlots, plural(len(r.t.Nodes), "master"))
	if read == 0 {
		sum = fmt.Sprintf("all %d slots served (CLUSTER SLOTS); CLUSTER INFO was not readable", clusterSlots)
	}
	return Finding{ID: IDClusterSlots, Severity: OK, Summary: sum, Detail: detail}, true
}

// nodeClusterInfo reads CLUSTER INFO on node n: a line for the detail, and
// what it shows wrong (the state not ok, slots unassigned or failing).
func nodeClusterInfo(ctx context.Context, r *run, n Node) (line string, problems []string, err error) {
	v, err := r.do(ctx, n.Client, "CLUSTER", "INFO")
	s, ok := v.(string)
	if err != nil || !ok {
		if err == nil {
			err = fmt.Errorf("unexpected reply %T", v)
		}
		return "", nil, fmt.Errorf("%s: CLUSTER INFO: %w", n.Addr, err)
	}
	info := resp.ParseInfo(s)
	line = fmt.Sprintf("%s: cluster_state %s, slots assigned %s, ok %s, pfail %s, fail %s, %s known",
		n.Addr, info["cluster_state"], info["cluster_slots_assigned"], info["cluster_slots_ok"],
		info["cluster_slots_pfail"], info["cluster_slots_fail"], plural(atoi(info["cluster_known_nodes"]), "node"))
	if info["cluster_state"] != "ok" {
		problems = append(problems, fmt.Sprintf("%s reports cluster_state %s", n.Addr, info["cluster_state"]))
	}
	if a := atoi(info["cluster_slots_assigned"]); a != clusterSlots {
		problems = append(problems, fmt.Sprintf("%s sees %d of %d slots assigned", n.Addr, a, clusterSlots))
	}
	if f := atoi(info["cluster_slots_fail"]) + atoi(info["cluster_slots_pfail"]); f > 0 {
		problems = append(problems, fmt.Sprintf("%s sees %d slots on failing nodes", n.Addr, f))
	}
	return line, problems, nil
}

// slotsCovered is how many slots the slot map covers as clients see it
// (CLUSTER SLOTS); -1 when it cannot be read.
func (r *run) slotsCovered(ctx context.Context) int {
	shards, err := r.shardsOf(ctx)
	if err != nil {
		return -1
	}
	covered := 0
	for _, sh := range shards {
		for _, rg := range sh.ranges {
			covered += rg[1] - rg[0] + 1
		}
	}
	return covered
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}
