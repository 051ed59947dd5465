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
//	lockbridge fleet [flags]                list the fleet's clients and whether the next step is safe
//	lockbridge unlock [flags] --force KEY   delete a lock by hand (asks first, unless --yes)
//
// Every command takes --help (or: lockbridge help COMMAND). Flags may come
// before or after the arguments.
//
// Connection: --redis URL, else the REDIS_URL environment variable:
// redis://[user:password@]host:port[/db], rediss:// for TLS; --cluster
// host:port,host:port,… for a Redis Cluster (user, password and TLS then
// from --redis). The migration namespace is --namespace, else
// LOCKBRIDGE_NAMESPACE, else "default". demo needs no Redis: without --redis
// or --cluster it runs on an embedded one, and it never reads REDIS_URL.
//
// Errors go to stderr, one line each. Exit codes: 0 success; 1 an error
// (unreachable Redis, a Redis error, a demo that failed); 2 bad usage (an
// unknown command or flag, a bad argument or URL); 3 the demo saw an
// overlap (two holders of one lock at once); 4 a phase step refused as
// unsafe; 5 a confirmation declined.
package main
