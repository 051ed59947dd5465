// Package doctor checks a Redis deployment against lockbridge's failure
// model and says, finding by finding, what is dangerous.
//
// [Run] runs a fixed list of checks and returns one [Finding] per check
// that applies: an ID, a [Severity] (ok, warn, unknown, danger), a
// one-line summary in plain words, a detail and a fix. The CLI's
// "lockbridge doctor" prints them; nothing here prints.
//
// The checks, in order:
//
//   - eviction: maxmemory-policy. allkeys-* can evict every lock and
//     namespace key; volatile-* the keys with a TTL (modern locks, the
//     modern half of migrate locks, legacy locks with a safety TTL). Either
//     is a danger: an evicted lock key lets a second holder in.
//   - replication: a replica is a danger (lockbridge must talk to the
//     primary); a primary with replicas a warning (replication is
//     asynchronous, so a failover can lose the last lock writes).
//   - persistence: appendonly yes with appendfsync always is ok; anything
//     less is a warning (a restart or crash loses locks).
//   - scripting: EVAL of a trivial script. Scripts that do not run are a
//     danger.
//   - acl: every command lockbridge sends ([Commands]), checked for the
//     connecting user with ACL DRYRUN where the user may run it, otherwise
//     by sending it on scratch keys — directly, and inside a script for the
//     commands the scripts send, since a refusal there surfaces only when a
//     script runs. A refused command is a danger, except SUBSCRIBE and
//     SSUBSCRIBE (a warning: waiters poll).
//   - sharded-pubsub (cluster only): SPUBLISH works (Redis >= 7).
//   - cluster-slots (cluster only): all 16384 slots served, cluster_state ok.
//   - namespace (with WithNamespace): the phase, registry and sightings as
//     the controller reads them; live clients in phases that do not exclude
//     each other, or a legacy-only locker seen after the fleet moved past
//     dual-write, are a danger; so is a phase lost. A namespace not started
//     yet (no phase and no trace of a fleet) is a warning naming
//     `lockbridge phase init`.
//   - clock: this host's clock against the server's TIME. Always ok:
//     lockbridge never lets the server's clock grant a lock.
//
// A check that cannot tell — a least-privilege user may not run CONFIG,
// INFO or ACL, Redis did not answer — returns Unknown, and the other checks
// still run; a check falls back to another source where there is one
// (INFO for CONFIG GET, probing by use for ACL DRYRUN). Warnings never fail
// a run.
//
// The probes write only scratch keys named "lockbridge:doctor:{…}:…" with a
// PX of one minute, deleted at the end, and publish one message on a
// scratch channel of that form.
package doctor
