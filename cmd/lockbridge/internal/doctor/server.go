package doctor

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// checkEviction: a maxmemory-policy that evicts keys can drop a lock key
// before its lease ends — and another client then takes the lock while the
// first still holds it.
func checkEviction(ctx context.Context, r *run) (Finding, bool) {
	return perNode(ctx, r, IDEviction, func(ctx context.Context, n Node) Finding {
		policy, perr := r.configOf(ctx, n, "maxmemory-policy")
		maxmem, merr := r.configOf(ctx, n, "maxmemory")
		if perr != nil || merr != nil {
			// INFO memory carries both, for a user without CONFIG.
			info, ierr := r.infoOf(ctx, n, "memory")
			if ierr != nil {
				err := perr
				if err == nil {
					err = merr
				}
				return Finding{
					Severity: Unknown,
					Summary:  "could not read maxmemory-policy (CONFIG and INFO denied or unanswered)",
					Detail:   fmt.Sprintf("%s; %s", errText(err), errText(ierr)),
					Fix: "run doctor as a user allowed CONFIG GET or INFO, or check maxmemory-policy in the server's " +
						"configuration by hand: it must be noeviction",
				}
			}
			policy, maxmem = info["maxmemory_policy"], info["maxmemory"]
		}
		return evictionFinding(policy, maxmem)
	})
}

func evictionFinding(policy, maxmem string) Finding {
	limit := "maxmemory is " + maxmem
	if maxmem == "0" {
		limit = "maxmemory is 0 (no limit) today, so nothing is evicted until a limit is set — but the policy is what a " +
			"limit would apply"
	}
	const fix = "CONFIG SET maxmemory-policy noeviction, and the same in redis.conf (writes then fail with OOM at the " +
		"limit: lockbridge reports the error and no lock is lost)"
	switch {
	case policy == "noeviction":
		return Finding{Severity: OK, Summary: "maxmemory-policy noeviction: no lock or namespace key is evicted"}
	case strings.HasPrefix(policy, "allkeys-"):
		return Finding{
			Severity: Danger,
			Summary:  fmt.Sprintf("maxmemory-policy %s can evict any lock or namespace key under memory pressure", policy),
			Detail: "An allkeys policy may evict every key lockbridge keeps: legacy lock values (the Java services' SETNX " +
				"keys and the Go legacy lockers', with or without a TTL), modern lock keys, the modern half of migrate locks, " +
				"fence counters (a fence could then repeat), and the namespace's phase, registry and sighting keys. " +
				"An evicted lock key lets a second client take a lock that is still held; an evicted phase key loses the " +
				"migration's state. " + limit + ".",
			Fix: fix,
		}
	case strings.HasPrefix(policy, "volatile-"):
		return Finding{
			Severity: Danger,
			Summary:  fmt.Sprintf("maxmemory-policy %s can evict lock keys that carry a TTL under memory pressure", policy),
			Detail: "A volatile policy evicts keys with a TTL before they expire: modern lock keys (SET NX PX), the modern " +
				"half of migrate locks, redlock keys, legacy locks taken by a Go locker with a safety TTL, and any namespace " +
				"key stored with a TTL. volatile-ttl picks the keys closest to expiry first, which lock keys usually are. " +
				"An evicted lock key lets a second client take a lock that is still held. Keys without a TTL (the Java " +
				"services' SETNX values, fence counters, the phase key) are not evicted by it. " + limit + ".",
			Fix: fix,
		}
	}
	return Finding{
		Severity: Unknown,
		Summary:  fmt.Sprintf("maxmemory-policy %q is not one doctor knows", policy),
		Fix:      "check that the policy never evicts keys; noeviction is the safe one",
	}
}

// checkReplication: Redis replicates asynchronously, so a failover can
// promote a replica that never received the last lock writes.
func checkReplication(ctx context.Context, r *run) (Finding, bool) {
	return perNode(ctx, r, IDReplication, func(ctx context.Context, n Node) Finding {
		info, err := r.infoOf(ctx, n, "replication")
		if err != nil {
			return Finding{
				Severity: Unknown,
				Summary:  "could not read the replication role (INFO denied or unanswered)",
				Detail:   errText(err),
				Fix: "run doctor as a user allowed INFO, or check the topology by hand: lockbridge must talk to a primary, " +
					"and a failover can lose locks",
			}
		}
		return replicationFinding(info)
	})
}

func replicationFinding(info map[string]string) Finding {
	role := info["role"]
	replicas, _ := strconv.Atoi(info["connected_slaves"])
	switch role {
	case "slave", "replica":
		return Finding{
			Severity: Danger,
			Summary:  "this server is a replica: lockbridge must talk to the primary",
			Detail: fmt.Sprintf("It replicates from %s:%s. A read-only replica refuses every lock write; a writable one "+
				"keeps lock writes to itself, where no other client sees them, and loses them at the next resync.",
				info["master_host"], info["master_port"]),
			Fix: "point lockbridge at the primary (or at Sentinel / the cluster, which find it)",
		}
	case "master":
	default:
		return Finding{Severity: Unknown, Summary: fmt.Sprintf("unexpected replication role %q", role)}
	}
	if replicas == 0 {
		return Finding{
			Severity: OK,
			Summary:  "primary without replicas: no failover can lose a lock (a restart can: see persistence)",
		}
	}
	return Finding{
		Severity: Warn,
		Summary: fmt.Sprintf("primary with %s: a failover can lose the last lock writes", plural(replicas,
			"connected replica")),
		Detail: "Replication is asynchronous: a lock written just before the primary fails may not have reached the " +
			"replica that takes over, and there a second client acquires it while the first still holds it. " +
			"Fencing does not prevent that overlap, but a fence strictly increasing across holders (modern locks " +
			"WithFencing) lets the storage the lock protects reject the writes of the stale holder, which carries " +
			"the lower fence. WAIT 1 after an acquire narrows the window; it does not close it.",
		Fix: "accept the window, or protect the guarded resource with fences; keep failovers manual or rare",
	}
}

// checkPersistence: a restart without persistence forgets every lock.
func checkPersistence(ctx context.Context, r *run) (Finding, bool) {
	return perNode(ctx, r, IDPersistence, func(ctx context.Context, n Node) Finding {
		aof, aerr := r.configOf(ctx, n, "appendonly")
		fsync, ferr := r.configOf(ctx, n, "appendfsync")
		save, serr := r.configOf(ctx, n, "save")
		if aerr == nil && ferr == nil && serr == nil {
			return persistenceFinding(aof == "yes", fsync, save, true)
		}
		info, ierr := r.infoOf(ctx, n, "persistence")
		if ierr != nil {
			return Finding{
				Severity: Unknown,
				Summary:  "could not read the persistence settings (CONFIG and INFO denied or unanswered)",
				Detail:   fmt.Sprintf("%s; %s", errText(aerr), errText(ierr)),
				Fix:      "run doctor as a user allowed CONFIG GET or INFO, or check appendonly and appendfsync by hand",
			}
		}
		if info["aof_enabled"] == "1" {
			// INFO does not tell appendfsync.
			return Finding{
				Severity: Unknown,
				Summary:  "appendonly is on, but appendfsync could not be read (CONFIG denied)",
				Detail: "With appendfsync always no acknowledged lock write is lost in a restart; with everysec up to " +
					"about a second of them can be.",
				Fix: "check appendfsync by hand, or run doctor as a user allowed CONFIG GET",
			}
		}
		return persistenceFinding(false, "", "", false)
	})
}

func persistenceFinding(aof bool, fsync, save string, knowSave bool) Finding {
	const fence = " A fence strictly increasing across holders (modern locks WithFencing) lets the storage the lock " +
		"protects reject the writes of a holder that lost its lock this way."
	switch {
	case aof && fsync == "always":
		return Finding{Severity: OK,
			Summary: "appendonly yes, appendfsync always: a restart loses no acknowledged lock write"}
	case aof:
		return Finding{
			Severity: Warn,
			Summary:  fmt.Sprintf("appendonly yes, appendfsync %s: a crash can lose the last lock writes", fsync),
			Detail: "A lock acquired in the last second or so before a crash (appendfsync everysec; longer with no) is " +
				"gone after the restart, and a second client can take it while the first still holds it." + fence,
			Fix: "CONFIG SET appendfsync always (and in redis.conf), if the write cost is acceptable",
		}
	}
	what := "every lock, the fence counters and the namespace's phase, registry and sightings"
	since := "are lost in a restart"
	if knowSave && strings.TrimSpace(save) != "" {
		since = fmt.Sprintf("written since the last snapshot (save %q) are lost in a restart", save)
	} else if !knowSave {
		since = "written since the last snapshot, if any, are lost in a restart"
	}
	return Finding{
		Severity: Warn,
		Summary:  "appendonly no: a restart forgets the locks held",
		Detail: fmt.Sprintf("Without the append-only file, %s %s: a second client can take a lock that is still held.",
			what, since) + fence,
		Fix: "CONFIG SET appendonly yes and appendfsync always (and in redis.conf), or accept that restarts lose locks",
	}
}
