package control

import (
	"fmt"
	"strings"
)

// The evidence the controller judges by — registry entries, legacy
// sightings, the phase's history and the mark — is the presence of keys. A
// key that eviction took looks like a client that never ran or a legacy
// locker never seen, so the controller refuses every unforced change while
// the server may have evicted any of it: under an allkeys-* policy, or when
// it cannot read the policy, or when one of those keys carries a TTL (it
// can expire, and volatile-* policies evict it). The namespace's keys carry
// none: under noeviction and the volatile-* policies they are never
// evicted.

// evictionBlockers are the blockers of a reading sn whose evidence may have
// been evicted; declared is the policy the operator declared for a server
// that cannot report it ("" none).
func evictionBlockers(sn snapshot, declared string) []Blocker {
	var out []Blocker
	policy, how := sn.policy, "the server reports"
	if policy == "" && declared != "" {
		policy, how = declared, fmt.Sprintf("the server cannot report it (%s); the operator declared", sn.policyErr)
	}
	switch {
	case policy == "":
		out = append(out, Blocker{Kind: blockEviction,
			Text: fmt.Sprintf("the controller cannot tell whether the server evicts keys (%s): a registry entry or legacy "+
				"sighting it needs may be gone without a trace; allow INFO for its user, or declare the server's "+
				"maxmemory-policy (WithMaxmemoryPolicy, `--maxmemory-policy`)", sn.policyErr)})
	case strings.HasPrefix(policy, "allkeys-"):
		out = append(out, Blocker{Kind: blockEviction,
			Text: fmt.Sprintf("%s maxmemory-policy %s: Redis may evict any key, so a registry entry or legacy sighting the "+
				"controller needs may be gone without a trace; set maxmemory-policy to noeviction or a volatile-* policy on the "+
				"server that holds the namespace (its keys carry no TTL)", how, policy)})
	}
	for _, k := range sn.expiring {
		out = append(out, Blocker{Kind: blockEviction,
			Text: fmt.Sprintf("key %q carries a TTL: evidence that can expire, or be evicted under a volatile-* policy; "+
				"remove the TTL (PERSIST) — lockbridge never sets one on it", k)})
	}
	return out
}

// maxmemoryPolicies are the values of maxmemory-policy.
var maxmemoryPolicies = []string{"noeviction", "allkeys-lru", "allkeys-lfu", "allkeys-random",
	"volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl"}
