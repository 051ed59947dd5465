package doctor

// Scope says where the library sends a command.
type Scope int

// The scopes; a command may have both.
const (
	// Direct: sent by the client as a command of its own.
	Direct Scope = 1 << iota
	// InScript: called by one of lockbridge's Lua scripts, where an ACL
	// refusal surfaces only when the script runs.
	InScript
)

// Topology says on which deployments a command is sent.
type Topology int

// The topologies.
const (
	Any        Topology = iota
	Standalone          // a single server (or a Ring)
	Cluster             // a Redis Cluster
)

// Command is one Redis command lockbridge sends, and what needs it.
type Command struct {
	Name     string
	Scope    Scope
	Topology Topology
	// UsedBy says which lockers or tools send it, and what fails without it.
	UsedBy string
	// Tolerated is true when lockbridge works on without the command (more
	// slowly): a denial is then a warning, not a danger.
	Tolerated bool
}

// Commands lists every command the library sends, directly or from its
// scripts (a test reads the scripts and the Go sources and checks that
// this list covers them).
func Commands() []Command {
	return append([]Command(nil), commands...)
}

var commands = []Command{
	{Name: "EVALSHA", Scope: Direct,
		UsedBy: "every script: atomic legacy locks, modern locks, migrate locks and phase steps, redlock — all fail with " +
			"NOPERM"},
	{Name: "EVAL", Scope: Direct,
		UsedBy: "the first run of each script on a server (and after a restart or SCRIPT FLUSH) — script-based locks then " +
			"fail with NOPERM"},
	{Name: "SETNX", Scope: Direct | InScript,
		UsedBy: "legacy locks (the Java scheme's acquire; the atomic acquire script)"},
	{Name: "GETSET", Scope: Direct, UsedBy: "classic legacy locks (the Java scheme's takeover of an expired lock)"},
	{Name: "GET", Scope: Direct | InScript, UsedBy: "every locker (lock values) and migrate (the namespace's phase)"},
	{Name: "SET", Scope: Direct | InScript,
		UsedBy: "modern and redlock acquires (SET NX PX), refreshes, migrate locks and phase steps"},
	{Name: "DEL", Scope: Direct | InScript, UsedBy: "releases of every lock kind"},
	{Name: "PEXPIRE", Scope: Direct | InScript, UsedBy: "legacy locks with a safety TTL"},
	{Name: "EXISTS", Scope: Direct | InScript, UsedBy: "migrate acquires; redisson: IsLocked"},
	{Name: "PTTL", Scope: Direct | InScript,
		UsedBy: "modern, migrate and redlock acquires and refreshes (the time a holder has left); redisson fair locks: " +
			"explaining a refusal"},
	{Name: "INCR", Scope: InScript, UsedBy: "fenced locks (the fence counter)"},
	{Name: "TIME", Scope: InScript, UsedBy: "legacy and migrate scripts (the server's clock, used only to refuse)"},
	{Name: "HSET", Scope: InScript,
		UsedBy: "migrate: the namespace state, the fleet registry's heartbeats and legacy sightings"},
	{Name: "HGET", Scope: Direct | InScript,
		UsedBy: "migrate: legacy sightings and the fleet registry's heartbeats (a late one is not written over a newer " +
			"one); redisson: an owner's hold count"},
	{Name: "HEXISTS", Scope: Direct | InScript,
		UsedBy: "redisson: every acquire, release and watchdog renewal (Redisson's scripts), and an owner's IsHeld"},
	{Name: "HMGET", Scope: InScript, UsedBy: "migrate: the namespace state read by heartbeats and phase steps"},
	{Name: "HINCRBY", Scope: InScript, UsedBy: "migrate: legacy sightings"},
	{Name: "HDEL", Scope: InScript, UsedBy: "migrate: pruning dead registry entries and lockbridge fleet forget"},
	{Name: "HVALS", Scope: InScript, UsedBy: "migrate: init reading the registry for a trace of the namespace"},
	{Name: "HGETALL", Scope: Direct | InScript,
		UsedBy: "migrate: the controller and lockbridge fleet reading the namespace, registry and sightings; redisson: " +
			"Holders"},
	{Name: "HSCAN", Scope: InScript, UsedBy: "migrate: the controller reading the fleet registry in chunks"},
	{Name: "ZSCAN", Scope: InScript, UsedBy: "migrate: the controller reading registry liveness in chunks"},
	{Name: "HLEN", Scope: InScript, UsedBy: "migrate: the controller's status script (the registry's size)"},
	{Name: "ZCARD", Scope: InScript, UsedBy: "migrate: the controller's status script (the liveness set's size)"},
	{Name: "ZADD", Scope: InScript, UsedBy: "migrate: registry liveness, scored by the server's clock"},
	{Name: "ZSCORE", Scope: Direct | InScript,
		UsedBy: "migrate: lockbridge fleet forget; redisson fair locks: the queue head's timeout, read to explain a refusal"},
	{Name: "ZRANGE", Scope: InScript, UsedBy: "migrate: the controller reading registry liveness"},
	{Name: "ZRANGEBYSCORE", Scope: InScript, UsedBy: "migrate: pruning dead registry entries"},
	{Name: "ZINCRBY", Scope: InScript, UsedBy: "redisson fair locks: the waiters' timeouts (Redisson's scripts)"},
	{Name: "RPUSH", Scope: InScript, UsedBy: "redisson fair locks: joining the waiters' queue"},
	{Name: "LINDEX", Scope: Direct | InScript,
		UsedBy: "redisson fair locks: the head of the waiters' queue (also read to explain a refusal)"},
	{Name: "LPOP", Scope: InScript, UsedBy: "redisson fair locks: leaving the queue and dropping stale waiters"},
	{Name: "LRANGE", Scope: InScript, UsedBy: "redisson fair locks: a waiter's place in the queue"},
	{Name: "LREM", Scope: InScript, UsedBy: "redisson fair locks: a waiter that gives up"},
	{Name: "ZREM", Scope: InScript, UsedBy: "migrate: pruning dead registry entries and lockbridge fleet forget"},
	{Name: "INFO", Scope: Direct | InScript,
		UsedBy: "redlock: each node's server run_id, read once, to refuse one server passed as several masters (without it " +
			"that check is skipped); migrate: the controller reads maxmemory_policy in its status script (without it every " +
			"unforced phase change is refused, unless the policy is declared with --maxmemory-policy)", Tolerated: true},
	{Name: "WAIT", Scope: Direct,
		UsedBy: "modern locks with WithWait (replica acknowledgement of an acquire); not sent otherwise", Tolerated: true},
	{Name: "MGET", Scope: Direct,
		UsedBy: "modern and migrate: reading a lock's token back after an acquire whose reply was lost"},
	{Name: "PUBLISH", Scope: InScript, Topology: Standalone,
		UsedBy: "release notices (ignored when refused: waiters poll) and phase-change notices (a phase step fails " +
			"without it)"},
	{Name: "SPUBLISH", Scope: InScript, Topology: Cluster,
		UsedBy: "release notices (ignored when refused: waiters poll) and phase-change notices (a phase step fails " +
			"without it)"},
	{Name: "PUBSUB", Scope: InScript,
		UsedBy: "releases: counting the release channel's subscribers (NUMSUB; SHARDNUMSUB in a cluster) so that a release " +
			"nobody waits for publishes nothing; when refused, every release publishes", Tolerated: true},
	{Name: "SUBSCRIBE", Scope: Direct, Topology: Standalone,
		UsedBy: "waiters and phase followers listening for notices; without it they poll", Tolerated: true},
	{Name: "SSUBSCRIBE", Scope: Direct, Topology: Cluster,
		UsedBy: "waiters and phase followers listening for notices; without it they poll", Tolerated: true},
}

// applies reports whether c is sent on a deployment (cluster or not).
func (c Command) applies(cluster bool) bool {
	switch c.Topology {
	case Standalone:
		return !cluster
	case Cluster:
		return cluster
	}
	return true
}
