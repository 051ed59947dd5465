package doctor

import (
	"context"
	_ "embed"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/lockbridge/lockbridge/driver"
)

//go:embed probe.lua
var probeSource string

// probeScript runs commands inside EVAL, the way lockbridge's scripts do.
var probeScript = driver.NewScript("cmd/lockbridge/internal/doctor/probe.lua", probeSource)

// trivialScript checks that scripts run at all.
const trivialScript = "return 1"

// How a command was checked.
const (
	viaDryRun = "ACL DRYRUN"
	viaDirect = "sent directly on scratch keys"
	viaScript = "sent inside a script on scratch keys"
)

// cmdResult is what one check of one command on one shard found.
type cmdResult struct {
	where, how string
	access     access
	msg        string
}

// aclResult is the ACL check's outcome: per command, every result.
type aclResult struct {
	user    string
	results map[string][]cmdResult
	methods []string // how each shard was checked, for the detail
	notes   []string // what could not be checked, and why
}

// probeKeys are the scratch names one shard's probes use.
type probeKeys struct {
	str, nx, hash, counter, str2, nx2, hash2, zset2, list2, ch string
}

func (r *run) probeKeys(tag string) probeKeys {
	return probeKeys{
		str: r.key(tag, "s"), nx: r.key(tag, "nx"), hash: r.key(tag, "h"),
		str2: r.key(tag, "s2"), nx2: r.key(tag, "nx2"), hash2: r.key(tag, "h2"),
		zset2: r.key(tag, "z2"), list2: r.key(tag, "l2"),
		counter: r.key(tag, "fence"), ch: channel(tag),
	}
}

// dryRunArgs returns the arguments of a command as lockbridge sends it, on
// the scratch keys: string keys and scripts, hashes, sorted sets and lists,
// pub/sub; a command of none of them has no arguments.
func dryRunArgs(name string, k probeKeys, cluster bool) []any {
	for _, args := range []func(string, probeKeys, bool) []any{stringArgs, hashArgs, zsetListArgs, pubSubArgs} {
		if a := args(name, k, cluster); a != nil {
			return a
		}
	}
	return []any{name}
}

// stringArgs are dryRunArgs for scripts and the commands on string keys and
// the server; nil for another command.
func stringArgs(name string, k probeKeys, _ bool) []any {
	switch name {
	case "EVALSHA":
		return []any{name, probeScript.Hash(), "1", k.str}
	case "EVAL":
		return []any{name, trivialScript, "1", k.str}
	case "SETNX", "GETSET":
		return []any{name, k.str, "doctor"}
	case "SET":
		return []any{name, k.str, "doctor", "NX", "PX", scratchTTL}
	case "GET", "DEL", "EXISTS", "PTTL", "MGET":
		return []any{name, k.str}
	case "PEXPIRE":
		return []any{name, k.str, scratchTTL}
	case "INCR":
		return []any{name, k.counter}
	case "TIME", "INFO":
		return []any{name}
	case "WAIT":
		return []any{name, "0", "1"}
	}
	return nil
}

// hashArgs are dryRunArgs for the hash commands; nil for another command.
func hashArgs(name string, k probeKeys, _ bool) []any {
	switch name {
	case "HSET":
		return []any{name, k.hash, "f", "v"}
	case "HGET", "HDEL", "HEXISTS", "HMGET":
		return []any{name, k.hash, "f"}
	case "HINCRBY":
		return []any{name, k.hash, "count", "1"}
	case "HGETALL", "HVALS", "HLEN":
		return []any{name, k.hash}
	case "HSCAN":
		return []any{name, k.hash, "0", "COUNT", "10"}
	}
	return nil
}

// zsetListArgs are dryRunArgs for the sorted-set and list commands (the
// fair lock's queue); nil for another command.
func zsetListArgs(name string, k probeKeys, _ bool) []any {
	switch name {
	case "ZADD", "ZINCRBY":
		return []any{name, k.hash + "z", "1", "m"}
	case "ZSCORE", "ZREM":
		return []any{name, k.hash + "z", "m"}
	case "ZRANGE":
		return []any{name, k.hash + "z", "0", "-1"}
	case "ZCARD":
		return []any{name, k.hash + "z"}
	case "ZSCAN":
		return []any{name, k.hash + "z", "0", "COUNT", "10"}
	case "ZRANGEBYSCORE":
		return []any{name, k.hash + "z", "-inf", "+inf"}
	case "RPUSH":
		return []any{name, k.hash + "l", "m"}
	case "LINDEX":
		return []any{name, k.hash + "l", "0"}
	case "LPOP":
		return []any{name, k.hash + "l"}
	case "LRANGE":
		return []any{name, k.hash + "l", "0", "-1"}
	case "LREM":
		return []any{name, k.hash + "l", "0", "m"}
	}
	return nil
}

// pubSubArgs are dryRunArgs for the pub/sub commands; nil for another
// command.
func pubSubArgs(name string, k probeKeys, cluster bool) []any {
	switch name {
	case "PUBLISH", "SPUBLISH":
		return []any{name, k.ch, "released"}
	case "PUBSUB":
		if cluster {
			return []any{name, "SHARDNUMSUB", k.ch}
		}
		return []any{name, "NUMSUB", k.ch}
	case "SUBSCRIBE", "SSUBSCRIBE":
		return []any{name, k.ch}
	}
	return nil
}

// checkACL checks every command lockbridge sends against the connecting
// user's ACL: with ACL DRYRUN where the user may run it, otherwise by
// sending each command on scratch keys — directly, and inside a script for
// the commands the scripts send, since a refusal there surfaces only when
// the script runs.
func checkACL(ctx context.Context, r *run) (Finding, bool) {
	res := r.aclCheck(ctx)
	f := aclFinding(res, r.t.Client.Cluster())
	f.ID = IDACL
	return f, true
}

func (r *run) aclCheck(ctx context.Context) aclResult {
	if r.aclDone {
		return r.acl
	}
	r.aclDone = true
	res := aclResult{results: map[string][]cmdResult{}}
	var sure bool
	res.user, sure = r.whoami(ctx)
	cluster := r.t.Client.Cluster()
	shards, err := r.shardsOf(ctx)
	if err != nil {
		// Without the slot map, probe through the cluster client with one
		// tag per node; the keyed probes land wherever that tag lives.
		res.notes = append(res.notes,
			fmt.Sprintf("the slot map is unknown (%s): the probes by use ran on the nodes serving their scratch keys, not "+
				"on every master", errText(err)))
		shards = nil
		for _, n := range r.t.Nodes {
			shards = append(shards, shard{addr: n.Addr, tag: newTag()})
		}
	}
	for _, sh := range shards {
		if sh.tag == "" {
			continue
		}
		k := r.probeKeys(sh.tag)
		// ACL DRYRUN only for a user known for sure: a dry run of another
		// user's rights would prove nothing.
		if n, ok := r.node(sh.addr); ok && sure && r.dryRun(ctx, n, res.user, k, cluster, &res) {
			res.methods = append(res.methods, fmt.Sprintf("%s: %s for user %q", sh.addr, viaDryRun, res.user))
			continue
		}
		r.probeByUse(ctx, sh.addr, k, cluster, &res)
		res.methods = append(res.methods,
			fmt.Sprintf("%s: by use, on scratch keys %s{%s}:…", sh.addr, ScratchPrefix, sh.tag))
	}
	r.acl = res
	return res
}

// whoami returns the connection's ACL user, and whether the server said so
// (ACL WHOAMI) rather than the Target.
func (r *run) whoami(ctx context.Context) (string, bool) {
	if v, err := r.do(ctx, r.t.Nodes[0].Client, "ACL", "WHOAMI"); err == nil {
		if s, ok := v.(string); ok && s != "" {
			return s, true
		}
	}
	if r.t.User != "" {
		return r.t.User, false
	}
	return "default", false
}

func (r *run) node(addr string) (Node, bool) {
	for _, n := range r.t.Nodes {
		if n.Addr == addr {
			return n, true
		}
	}
	return Node{}, false
}

// dryRun checks every command with ACL DRYRUN on n. It returns false, having
// recorded nothing, when the user may not run ACL DRYRUN (or the server
// has none: Redis < 7).
func (r *run) dryRun(ctx context.Context, n Node, user string, k probeKeys, cluster bool, res *aclResult) bool {
	first := true
	for _, c := range commands {
		if !c.applies(cluster) {
			continue
		}
		args := append([]any{"ACL", "DRYRUN", user}, dryRunArgs(c.Name, k, cluster)...)
		v, err := r.do(ctx, n.Client, args...)
		if first {
			if err != nil {
				return false
			}
			first = false
		}
		cr := cmdResult{where: n.Addr, how: viaDryRun}
		switch s, _ := v.(string); {
		case err != nil:
			cr.access, cr.msg = classifyErr(err), errText(err)
		default:
			cr.access, cr.msg = classify(s), s
		}
		res.results[c.Name] = append(res.results[c.Name], cr)
	}
	return true
}

// probeByUse sends every command on the scratch keys of one shard.
func (r *run) probeByUse(ctx context.Context, where string, k probeKeys, cluster bool, res *aclResult) {
	record := func(name, how string, err error) {
		cr := cmdResult{where: where, how: how, access: classifyErr(err)}
		if err != nil {
			cr.msg = errText(err)
			if i := strings.Index(cr.msg, "NOPERM"); i > 0 {
				cr.msg = cr.msg[i:] // the server's words, without the driver's wrapping
			}
		}
		res.results[name] = append(res.results[name], cr)
	}
	c := r.t.Client
	direct := func(args ...any) {
		_, err := r.do(ctx, c, args...)
		record(args[0].(string), viaDirect, err)
	}
	direct("SET", k.str, "doctor", "NX", "PX", scratchTTL)
	direct("GET", k.str)
	direct("MGET", k.str)
	direct("GETSET", k.str, "doctor") // drops the TTL: PEXPIRE sets it again
	direct("PEXPIRE", k.str, scratchTTL)
	direct("SETNX", k.nx, "doctor")
	_, _ = r.do(ctx, c, "PEXPIRE", k.nx, scratchTTL)
	direct("DEL", k.nx)
	direct("PTTL", k.str)
	direct("LINDEX", k.list2, "0")
	direct("ZSCORE", k.zset2, "m")
	// A script the server does not hold: NOSCRIPT means EVALSHA was let
	// through.
	direct("EVALSHA", probeScript.Hash(), "1", k.str)
	direct("EVAL", trivialScript, "1", k.str)
	direct("INFO", "server")
	direct("WAIT", "0", "1") // no replica asked for: answers at once

	sub := "SUBSCRIBE"
	if cluster {
		sub = "SSUBSCRIBE"
	}
	sctx, cancel := context.WithTimeout(ctx, r.cfg.timeout)
	s, err := c.Subscribe(sctx, k.ch)
	cancel()
	if err == nil {
		_ = s.Close()
	}
	record(sub, viaDirect, err)

	r.probeScripts(ctx, where, k, cluster, res)
}

// scriptCalls are the commands the probe script sends: every command
// lockbridge's scripts send, on scratch keys (with PEXPIRE after those that
// create a key without a TTL).
func scriptCalls(k probeKeys, cluster bool) [][]string {
	pub, count := "PUBLISH", "NUMSUB"
	if cluster {
		pub, count = "SPUBLISH", "SHARDNUMSUB"
	}
	return [][]string{
		{"SET", k.str2, "doctor", "PX", scratchTTL},
		{"GET", k.str2},
		{"SETNX", k.nx2, "doctor"},
		{"PEXPIRE", k.nx2, scratchTTL},
		{"EXISTS", k.str2},
		{"PTTL", k.str2},
		{"DEL", k.nx2},
		{"INCR", k.counter},
		{"PEXPIRE", k.counter, scratchTTL},
		{"TIME"},
		{"HSET", k.hash2, "f", "v"},
		{"PEXPIRE", k.hash2, scratchTTL},
		{"HINCRBY", k.hash2, "count", "1"},
		{"HGET", k.hash2, "f"},
		{"HEXISTS", k.hash2, "f"},
		{"HMGET", k.hash2, "f"},
		{"HGETALL", k.hash2},
		{"HVALS", k.hash2},
		{"HLEN", k.hash2},
		{"HSCAN", k.hash2, "0", "COUNT", "10"},
		{"INFO", "memory"},
		{"HDEL", k.hash2, "f"},
		{"ZADD", k.zset2, "1", "m"},
		{"PEXPIRE", k.zset2, scratchTTL},
		{"ZSCORE", k.zset2, "m"},
		{"ZRANGE", k.zset2, "0", "-1"},
		{"ZCARD", k.zset2},
		{"ZSCAN", k.zset2, "0", "COUNT", "10"},
		{"ZRANGEBYSCORE", k.zset2, "-inf", "+inf"},
		{"ZINCRBY", k.zset2, "1", "m"},
		{"ZREM", k.zset2, "m"},
		{"RPUSH", k.list2, "m"},
		{"PEXPIRE", k.list2, scratchTTL},
		{"LINDEX", k.list2, "0"},
		{"LRANGE", k.list2, "0", "-1"},
		{"LREM", k.list2, "0", "m"},
		{"LPOP", k.list2},
		{"PUBSUB", count, k.ch},
		{pub, k.ch, "released"},
	}
}

// probeScripts runs the commands lockbridge's scripts send inside one
// script, each under redis.pcall.
func (r *run) probeScripts(ctx context.Context, where string, k probeKeys, cluster bool, res *aclResult) {
	calls := scriptCalls(k, cluster)
	var argv []any
	for _, call := range calls {
		argv = append(argv, strconv.Itoa(len(call)))
		for _, w := range call {
			argv = append(argv, w)
		}
	}
	keys := []string{k.str2, k.nx2, k.counter, k.hash2, k.zset2, k.list2, k.ch}
	args := []any{"EVAL", probeSource, strconv.Itoa(len(keys))}
	for _, key := range keys {
		args = append(args, key)
	}
	args = append(args, argv...)
	v, err := r.do(ctx, r.t.Client, args...)
	out, ok := v.([]any)
	if err != nil || !ok || len(out) != len(calls) {
		why := "EVAL failed"
		if err != nil {
			why = "EVAL: " + errText(err)
		}
		for _, call := range calls {
			if c, ok := commandNamed(call[0]); ok && c.Scope == InScript {
				// Only the script-only commands are left unchecked: the
				// others were also sent directly.
				res.results[call[0]] = append(res.results[call[0]],
					cmdResult{where: where, how: viaScript, access: notSent, msg: why})
			}
		}
		return
	}
	seen := map[string]bool{}
	for i, call := range calls {
		name := call[0]
		msg, _ := out[i].(string)
		a := classify(msg)
		if seen[name] && a == allowed {
			continue // PEXPIRE runs three times; one result is enough unless refused
		}
		seen[name] = true
		cr := cmdResult{where: where, how: viaScript, access: a}
		if a != allowed {
			cr.msg = msg
		}
		res.results[name] = append(res.results[name], cr)
	}
}

func commandNamed(name string) (Command, bool) {
	for _, c := range commands {
		if c.Name == name {
			return c, true
		}
	}
	return Command{}, false
}

// worst returns the worst of a command's results: a refusal of the
// command, then anything that leaves it unchecked, then allowed.
func worst(rs []cmdResult) (cmdResult, bool) {
	rank := func(a access) int {
		switch a {
		case deniedCommand, missing:
			return 2
		case allowed:
			return 0
		}
		return 1
	}
	if len(rs) == 0 {
		return cmdResult{}, false
	}
	w := rs[0]
	for _, r := range rs[1:] {
		if rank(r.access) > rank(w.access) {
			w = r
		}
	}
	return w, true
}

// aclTally sorts the commands by what the ACL check found: refused (a
// command lockbridge needs), tolerated (one it works on without), and
// unchecked, grouped by why; with the detail's lines and the rights to grant.
type aclTally struct {
	refused, tolerated, unchecked []string
	lines                         []string
	fixRights, fixMissing         []string
	why                           map[string][]string // unchecked commands by reason
	whyOrder                      []string
	checked                       int
}

// tallyACL sorts every command that applies by its worst result.
func tallyACL(res aclResult, cluster bool) *aclTally {
	t := &aclTally{why: map[string][]string{}}
	for _, c := range commands {
		if !c.applies(cluster) {
			continue
		}
		w, ok := worst(res.results[c.Name])
		if !ok {
			t.unknown(c.Name, "not checked")
			continue
		}
		t.checked++
		switch w.access {
		case allowed:
		case deniedCommand, missing:
			t.denied(c, w)
		default:
			reason := "no answer"
			switch w.access {
			case deniedKey:
				reason = "the user may not touch the scratch keys " + ScratchPrefix + "*"
			case deniedChannel:
				reason = "the user may not use the scratch channel " + ScratchPrefix + "*"
			case notSent:
				reason = "no script could run to send them"
			}
			t.unknown(c.Name, fmt.Sprintf("%s (%s, %s: %s)", reason, w.how, w.where, w.msg))
		}
	}
	return t
}

// unknown counts a command that could not be checked, and why.
func (t *aclTally) unknown(name, reason string) {
	t.unchecked = append(t.unchecked, name)
	if _, ok := t.why[reason]; !ok {
		t.whyOrder = append(t.whyOrder, reason)
	}
	t.why[reason] = append(t.why[reason], name)
}

// denied counts a command the ACL denies or the server does not know.
func (t *aclTally) denied(c Command, w cmdResult) {
	what := "denied by the ACL"
	if w.access == missing {
		what = "unknown to the server (renamed or disabled)"
		t.fixMissing = append(t.fixMissing, c.Name)
	} else {
		t.fixRights = append(t.fixRights, "+"+strings.ToLower(c.Name))
	}
	if c.Tolerated {
		t.tolerated = append(t.tolerated, c.Name)
	} else {
		t.refused = append(t.refused, c.Name)
	}
	t.lines = append(t.lines, fmt.Sprintf("%s: %s (%s, %s: %s) — used by %s", c.Name, what, w.how, w.where, w.msg,
		c.UsedBy))
}

// detail is the finding's detail: what was denied, what could not be told
// and why, how each shard was checked, and the notes.
func (t *aclTally) detail(res aclResult) string {
	lines := t.lines
	for _, reason := range t.whyOrder {
		lines = append(lines, fmt.Sprintf("could not tell for %s: %s", strings.Join(t.why[reason], ", "), reason))
	}
	detail := strings.Join(lines, "\n")
	if len(res.methods) > 0 {
		detail = strings.TrimLeft(detail+"\nchecked: "+strings.Join(res.methods, "; "), "\n")
	}
	for _, n := range res.notes {
		detail += "\nnote: " + n
	}
	return detail
}

// fix is what to do about the denied and the missing commands.
func (t *aclTally) fix(user string) []string {
	var fix []string
	if len(t.fixRights) > 0 {
		sort.Strings(t.fixRights)
		fix = append(fix, fmt.Sprintf("ACL SETUSER %s %s (and the same in the ACL file or users.acl, on every node)",
			user, strings.Join(t.fixRights, " ")))
	}
	if len(t.fixMissing) > 0 {
		fix = append(fix, fmt.Sprintf("the server does not know %s: remove the rename-command of it, "+
			"or use a Redis that has it", strings.Join(t.fixMissing, ", ")))
	}
	return fix
}

// aclFinding judges the ACL check: danger when a command lockbridge needs
// is refused, unknown when some could not be checked, a warning when only
// commands it works on without are refused.
func aclFinding(res aclResult, cluster bool) Finding {
	t := tallyACL(res, cluster)
	detail, fix := t.detail(res), t.fix(res.user)
	user := fmt.Sprintf("user %q", res.user)
	switch {
	case len(t.refused) > 0:
		c, _ := commandNamed(t.refused[0])
		return Finding{
			Severity: Danger,
			Summary: fmt.Sprintf("%s may not run %s: %s", user, strings.Join(append(t.refused, t.tolerated...), ", "),
				c.UsedBy),
			Detail: detail,
			Fix:    strings.Join(fix, "; "),
		}
	case len(t.unchecked) > 0:
		fix = append(fix, "grant the user the scratch keys and channels "+ScratchPrefix+"* (~"+ScratchPrefix+"* &"+
			ScratchPrefix+"*), or run doctor as a user allowed ACL DRYRUN")
		s := Finding{
			Severity: Unknown,
			Summary:  fmt.Sprintf("could not tell whether %s may run %s", user, strings.Join(t.unchecked, ", ")),
			Detail:   detail,
			Fix:      strings.Join(fix, "; "),
		}
		if len(t.tolerated) > 0 {
			s.Summary += fmt.Sprintf("; %s is denied (lockbridge works on without it)", strings.Join(t.tolerated, ", "))
		}
		return s
	case len(t.tolerated) > 0:
		return Finding{
			Severity: Warn,
			Summary: fmt.Sprintf("%s may not run %s: lockbridge works on without it (see the detail for what is lost)",
				user, strings.Join(t.tolerated, ", ")),
			Detail: detail,
			Fix:    strings.Join(fix, "; "),
		}
	}
	return Finding{
		Severity: OK,
		Summary:  fmt.Sprintf("%s may run all %d commands lockbridge sends", user, t.checked),
		Detail:   detail,
	}
}

// checkScripting: every lockbridge locker but the classic legacy one runs
// Lua scripts.
func checkScripting(ctx context.Context, r *run) (Finding, bool) {
	shards, err := r.shardsOf(ctx)
	if err != nil {
		shards = []shard{{addr: "(any node)", tag: newTag()}}
	}
	var fs []Finding
	var addrs []string
	for _, sh := range shards {
		if sh.tag == "" {
			continue
		}
		v, err := r.do(ctx, r.t.Client, "EVAL", trivialScript, "1", r.key(sh.tag, "s"))
		fs = append(fs, scriptingFinding(v, err))
		addrs = append(addrs, sh.addr)
	}
	if len(fs) == 0 {
		return Finding{ID: IDScripting, Severity: Unknown, Summary: "no node serves any slot: scripting not checked"}, true
	}
	f := merge(IDScripting, addrs, fs)
	f.ID = IDScripting
	return f, true
}

func scriptingFinding(v any, err error) Finding {
	if err == nil {
		if n, ok := v.(int64); ok && n == 1 {
			return Finding{Severity: OK, Summary: "Lua scripts run (EVAL)"}
		}
		return Finding{Severity: Unknown, Summary: fmt.Sprintf("EVAL of %q returned %#v, not 1", trivialScript, v)}
	}
	switch classifyErr(err) {
	case deniedCommand, deniedKey:
		return Finding{
			Severity: Unknown,
			Summary:  "this user may not run EVAL, so whether the server runs scripts could not be tested (see acl)",
			Detail:   errText(err),
		}
	case noAnswer:
		return Finding{Severity: Unknown, Summary: "EVAL got no answer", Detail: errText(err)}
	}
	return Finding{
		Severity: Danger,
		Summary:  "Lua scripts do not run here: atomic legacy, modern, migrate and redlock locks all fail",
		Detail:   "EVAL " + strconv.Quote(trivialScript) + " answered: " + errText(err),
		Fix: "enable scripting (remove any rename-command of EVAL/EVALSHA, or pick a service that allows Lua), or " +
			"use only the classic legacy locker",
	}
}
