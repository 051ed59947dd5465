// Command lockbridge is the operator's tool for lockbridge: a live demo of a
// mixed Java/Go fleet migrating from the legacy lock to the modern one, and
// inspection and phase control of a real Redis.
//
// Usage:
//
//	lockbridge demo [flags]                 run the mixed-fleet migration demo
//	lockbridge inspect [flags] KEY          decode what a lock key holds
//	lockbridge phase get [flags]            print the namespace's phase
//	lockbridge phase set [flags] PHASE      move the fleet one step (--force to override)
//	lockbridge phase init|repair [flags]    start a namespace; restore a lost phase (--to)
//	lockbridge fleet [flags] [--watch]      list the fleet's clients and whether the next step is safe
//	lockbridge fleet forget [flags] ID      remove a dead client from the registry
//	lockbridge unlock [flags] --force KEY   delete a lock by hand (asks first, unless --yes)
//	lockbridge doctor [flags]               check a Redis against lockbridge's failure model
//	lockbridge completion SHELL             a completion script for bash, zsh, fish or powershell
//
// Every command takes --help (or: lockbridge help COMMAND); --version prints
// the module version, the VCS commit the build recorded and the Go version.
// Flags may come before or after the command and its arguments (the
// command line is parsed by spf13/cobra). inspect, phase, fleet and doctor
// take --output json: one versioned JSON document (fleet --watch: one a
// line), described in docs/cli.md.
//
// Connection: --redis URL, else the REDIS_URL environment variable:
// redis://[user:password@]host:port[/db], rediss:// for TLS; --cluster
// host:port,host:port,… for a Redis Cluster (user, password and TLS then
// from --redis). The migration namespace is --namespace, else
// LOCKBRIDGE_NAMESPACE, else "default". demo needs no Redis: without --redis
// or --cluster it runs on an embedded one, and it never reads REDIS_URL.
//
// doctor checks a server (or every master of a cluster) and prints one
// finding per check — ok, warn, unknown or danger — with what it means and
// the fix: maxmemory-policy (allkeys-* and volatile-* can evict lock keys:
// danger), replication (a replica: danger; a primary with replicas: warn),
// persistence (short of appendonly yes + appendfsync always: warn),
// scripting (scripts that do not run: danger), the ACL rights of the
// connecting user for every command lockbridge sends, directly and inside
// its scripts (checked with ACL DRYRUN, or else by use on scratch keys
// lockbridge:doctor:{…}:…, deleted at the end; a denied command: danger,
// SUBSCRIBE/SSUBSCRIBE: warn), in a cluster sharded pub/sub and slot
// coverage (danger when missing), with --namespace the namespace's phase,
// registry and sightings (live clients in phases that do not exclude each
// other, or a legacy-only locker seen past dual-write: danger), and the
// offset of this host's clock from the server's TIME (informational only).
// A check that cannot tell — a user without CONFIG, INFO or ACL, no
// answer — reports unknown and the others still run.
//
// Errors go to stderr, one line each. Exit codes: 0 success (doctor:
// nothing dangerous, nothing unknown; warnings allowed); 1 an error
// (unreachable Redis, a Redis error, a demo that failed) or, for doctor,
// something dangerous; 2 bad usage (an unknown command or flag, a bad
// argument or URL, a phase change without a namespace); 3 the demo saw an
// overlap (two holders of one lock at once); 4 a phase step refused as
// unsafe, or for fleet the next step not safe (or the phase unknown); 5 a
// confirmation declined; 6 doctor could not tell some finding and found
// nothing dangerous; 130 interrupted (Ctrl-C or SIGTERM).
package main
