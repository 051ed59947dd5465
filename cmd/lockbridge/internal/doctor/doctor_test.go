package doctor

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/driver/goredis"
	"github.com/lockbridge/lockbridge/internal/testing/javareplay"
	"github.com/lockbridge/lockbridge/internal/testing/redistest"
	"github.com/lockbridge/lockbridge/migrate"
	goredislib "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// quiet silences go-redis' own log lines (dial failures are expected in
// TestDoctorUnreachableNode).
type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

func init() { goredislib.SetLogger(quiet{}) }

// client returns a go-redis client on srv as user (with password "pw"),
// or as the default user when user is "".
func client(t *testing.T, addr, user string) driver.Client {
	t.Helper()
	o := &goredislib.Options{Addr: addr, MaxRetries: -1}
	if user != "" {
		o.Username, o.Password = user, "pw"
	}
	c := goredislib.NewClient(o)
	t.Cleanup(func() { _ = c.Close() })
	return goredis.New(c)
}

// single is the Target of one server, reached as user ("" for default).
func single(c driver.Client, addr string, user ...string) Target {
	t := Target{Client: c, Nodes: []Node{{Addr: addr, Client: c}}}
	if len(user) > 0 {
		t.User = user[0]
	}
	return t
}

// byID returns the findings by ID.
func byID(t *testing.T, rep Report) map[string]Finding {
	t.Helper()
	m := map[string]Finding{}
	for _, f := range rep.Findings {
		_, dup := m[f.ID]
		require.False(t, dup, "finding %q twice", f.ID)
		m[f.ID] = f
	}
	return m
}

func ids(rep Report) []string {
	var s []string
	for _, f := range rep.Findings {
		s = append(s, f.ID)
	}
	return s
}

// noScratch checks that no scratch key is left.
func noScratch(t *testing.T, admin driver.Client) {
	t.Helper()
	v, err := admin.Do(context.Background(), "KEYS", ScratchPrefix+"*")
	require.NoError(t, err)
	assert.Empty(t, v, "scratch keys left behind")
}

func runOK(t *testing.T, tg Target, opts ...Option) Report {
	t.Helper()
	rep, err := Run(context.Background(), tg, opts...)
	require.NoError(t, err)
	return rep
}

func TestDoctorCleanServer(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c := client(t, srv.Addr(), "")
	rep := runOK(t, single(c, srv.Addr()))
	assert.Equal(t, []string{IDEviction, IDReplication, IDPersistence, IDScripting, IDACL, IDClock}, ids(rep))
	f := byID(t, rep)
	for _, id := range []string{IDEviction, IDReplication, IDScripting, IDACL, IDClock} {
		assert.Equal(t, OK, f[id].Severity, "%s: %+v", id, f[id])
	}
	// redistest runs without persistence: a warning, which does not fail.
	assert.Equal(t, Warn, f[IDPersistence].Severity)
	assert.Contains(t, f[IDPersistence].Summary, "appendonly no")
	assert.Contains(t, f[IDPersistence].Detail, "fence strictly increasing")
	assert.Equal(t, Warn, rep.Worst())
	assert.Regexp(t, `user "default" may run all [0-9]+ commands`, f[IDACL].Summary)
	assert.Contains(t, f[IDACL].Detail, viaDryRun)
	noScratch(t, c)

	// With persistence as lockbridge wants it, nothing is left to say.
	for _, kv := range [][2]string{{"appendonly", "yes"}, {"appendfsync", "always"}} {
		_, err := c.Do(context.Background(), "CONFIG", "SET", kv[0], kv[1])
		require.NoError(t, err)
	}
	rep = runOK(t, single(c, srv.Addr()))
	assert.Equal(t, OK, rep.Worst(), "%+v", rep)
	_, err := c.Do(context.Background(), "CONFIG", "SET", "appendfsync", "everysec")
	require.NoError(t, err)
	f = byID(t, runOK(t, single(c, srv.Addr())))
	assert.Equal(t, Warn, f[IDPersistence].Severity)
	assert.Contains(t, f[IDPersistence].Summary, "appendfsync everysec")
}

func TestDoctorEvictionPolicy(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c := client(t, srv.Addr(), "")
	for _, tc := range []struct {
		policy string
		sev    Severity
		want   string
	}{
		{"allkeys-lru", Danger, "can evict any lock or namespace key"},
		{"allkeys-lfu", Danger, "can evict any lock or namespace key"},
		{"allkeys-random", Danger, "can evict any lock or namespace key"},
		{"volatile-lru", Danger, "can evict lock keys that carry a TTL"},
		{"volatile-ttl", Danger, "can evict lock keys that carry a TTL"},
		{"volatile-random", Danger, "can evict lock keys that carry a TTL"},
		{"noeviction", OK, "noeviction"},
	} {
		_, err := c.Do(context.Background(), "CONFIG", "SET", "maxmemory-policy", tc.policy)
		require.NoError(t, err)
		rep := runOK(t, single(c, srv.Addr()))
		f := byID(t, rep)[IDEviction]
		assert.Equal(t, tc.sev, f.Severity, tc.policy)
		assert.Contains(t, f.Summary, tc.policy)
		assert.Contains(t, f.Summary, tc.want)
		if tc.sev == Danger {
			assert.Equal(t, Danger, rep.Worst())
			assert.Contains(t, f.Fix, "noeviction")
			assert.Contains(t, f.Detail, "modern lock keys")
		}
	}
	f := evictionFinding("volatile-lfu", "100mb")
	assert.Contains(t, f.Detail, "Java services' SETNX values", "says which locks a volatile policy spares")
}

// acl creates user (password "pw") with rules, as the default user.
func acl(t *testing.T, admin driver.Client, user string, rules ...string) {
	t.Helper()
	args := []any{"ACL", "SETUSER", user, "on", ">pw"}
	for _, r := range rules {
		args = append(args, r)
	}
	_, err := admin.Do(context.Background(), args...)
	require.NoError(t, err)
}

func TestDoctorACL(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	admin := client(t, srv.Addr(), "")
	for _, tc := range []struct {
		name  string
		rules []string
		sev   Severity
		named []string // in the summary
		via   string   // in the detail
	}{
		{"missing evalsha, with ACL DRYRUN", []string{"~*", "&*", "+@all", "-evalsha"}, Danger, []string{"EVALSHA"},
			viaDryRun},
		{"missing evalsha, probed by use", []string{"~*", "&*", "+@all", "-evalsha", "-acl"}, Danger, []string{"EVALSHA"},
			viaDirect},
		{"missing hincrby, with ACL DRYRUN", []string{"~*", "&*", "+@all", "-hincrby"}, Danger, []string{"HINCRBY"},
			viaDryRun},
		{"missing time, only in scripts", []string{"~*", "&*", "+@all", "-time", "-acl"}, Danger, []string{"TIME"},
			viaScript},
		{"missing publish, only in scripts", []string{"~*", "&*", "+@all", "-publish", "-acl"}, Danger, []string{"PUBLISH"},
			viaScript},
		{"no scripting", []string{"~*", "&*", "+@all", "-@scripting", "-acl"}, Danger, []string{"EVALSHA", "EVAL"},
			viaDirect},
		{"missing subscribe: waiters poll", []string{"~*", "&*", "+@all", "-subscribe", "-acl"}, Warn, []string{"SUBSCRIBE"},
			viaDirect},
		{"no scratch keys", []string{"~app:*", "resetchannels", "+@all", "-acl"}, Unknown, []string{"GET", "EVALSHA", "TIME"},
			"may not touch the scratch keys"},
		{"all allowed, probed by use", []string{"~*", "&*", "+@all", "-acl"}, OK, []string{"may run all"}, "by use"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			user := "u" + strings.NewReplacer(" ", "", ",", "", ":", "").Replace(tc.name)
			acl(t, admin, user, tc.rules...)
			c := client(t, srv.Addr(), user)
			rep := runOK(t, single(c, srv.Addr(), user))
			f := byID(t, rep)[IDACL]
			assert.Equal(t, tc.sev, f.Severity, "%+v", f)
			for _, n := range tc.named {
				assert.Contains(t, f.Summary, n)
			}
			assert.Contains(t, f.Summary, `user "`+user+`"`)
			assert.Contains(t, f.Detail, tc.via)
			if tc.sev == Danger || tc.sev == Warn {
				assert.Contains(t, f.Fix, "ACL SETUSER "+user+" +")
				for _, n := range tc.named {
					assert.Contains(t, f.Fix, " +"+strings.ToLower(n))
				}
			}
			noScratch(t, admin)
		})
	}
}

func TestDoctorLeastPrivilegeUser(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	admin := client(t, srv.Addr(), "")
	acl(t, admin, "app", "~*", "&*", "+@all", "-config", "-info", "-acl")
	c := client(t, srv.Addr(), "app")
	rep := runOK(t, single(c, srv.Addr()))
	f := byID(t, rep)
	for _, id := range []string{IDEviction, IDReplication, IDPersistence} {
		assert.Equal(t, Unknown, f[id].Severity, "%s: %+v", id, f[id])
		assert.Contains(t, f[id].Summary, "could not read")
		assert.Contains(t, f[id].Detail, "NOPERM")
		assert.NotEmpty(t, f[id].Fix)
	}
	// The rest is still checked.
	for _, id := range []string{IDScripting, IDClock} {
		assert.Equal(t, OK, f[id].Severity, "%s: %+v", id, f[id])
	}
	// INFO is denied: only redlock's one-server check needs it.
	assert.Equal(t, Warn, f[IDACL].Severity, "%+v", f[IDACL])
	assert.Contains(t, f[IDACL].Summary, "may not run INFO")
	assert.Equal(t, Unknown, rep.Worst())

	// INFO alone is enough for the eviction policy.
	acl(t, admin, "app2", "~*", "&*", "+@all", "-config", "-acl")
	_, err := admin.Do(context.Background(), "CONFIG", "SET", "maxmemory-policy", "allkeys-lfu")
	require.NoError(t, err)
	f = byID(t, runOK(t, single(client(t, srv.Addr(), "app2"), srv.Addr())))
	assert.Equal(t, Danger, f[IDEviction].Severity)
	assert.Equal(t, Warn, f[IDPersistence].Severity, "INFO tells the append-only file is off")
	assert.Equal(t, OK, f[IDReplication].Severity)
}

func TestDoctorReplica(t *testing.T) {
	t.Parallel()
	srvs := redistest.StartN(t, 2)
	primary, replica := client(t, srvs[0].Addr(), ""), client(t, srvs[1].Addr(), "")
	host, port, _ := strings.Cut(srvs[0].Addr(), ":")
	_, err := replica.Do(context.Background(), "REPLICAOF", host, port)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		v, err := replica.Do(context.Background(), "INFO", "replication")
		return err == nil && strings.Contains(v.(string), "master_link_status:up")
	}, 20*time.Second, 20*time.Millisecond)

	f := byID(t, runOK(t, single(replica, srvs[1].Addr())))[IDReplication]
	assert.Equal(t, Danger, f.Severity)
	assert.Contains(t, f.Summary, "replica")
	assert.Contains(t, f.Detail, srvs[0].Addr())

	f = byID(t, runOK(t, single(primary, srvs[0].Addr())))[IDReplication]
	assert.Equal(t, Warn, f.Severity)
	assert.Contains(t, f.Summary, "1 connected replica")
	assert.Contains(t, f.Detail, "fence strictly increasing")
}

func TestDoctorCluster(t *testing.T) {
	t.Parallel()
	cl := redistest.StartCluster(t)
	cc := goredislib.NewClusterClient(&goredislib.ClusterOptions{Addrs: cl.Addrs(), MaxRetries: -1, MaxRedirects: -1})
	t.Cleanup(func() { _ = cc.Close() })
	tg := Target{Client: goredis.New(cc)}
	for _, a := range cl.Addrs() {
		tg.Nodes = append(tg.Nodes, Node{Addr: a, Client: client(t, a, "")})
	}
	rep := runOK(t, tg)
	f := byID(t, rep)
	assert.Equal(t, []string{IDEviction, IDReplication, IDPersistence, IDScripting, IDACL, IDShardedPubSub, IDClusterSlots,
		IDClock}, ids(rep))
	assert.Equal(t, OK, f[IDClusterSlots].Severity, "%+v", f[IDClusterSlots])
	assert.Contains(t, f[IDClusterSlots].Summary, "all 16384 slots served by 3 masters")
	assert.Equal(t, OK, f[IDShardedPubSub].Severity, "%+v", f[IDShardedPubSub])
	assert.Contains(t, f[IDShardedPubSub].Summary, "every node: sharded pub/sub works")
	assert.Equal(t, OK, f[IDACL].Severity, "%+v", f[IDACL])
	assert.Regexp(t, "all [0-9]+ commands", f[IDACL].Summary) // SPUBLISH and SSUBSCRIBE in place of PUBLISH and SUBSCRIBE
	for _, a := range cl.Addrs() {
		assert.Contains(t, f[IDACL].Detail, a+": "+viaDryRun, "every master checked")
	}
	assert.Equal(t, OK, f[IDEviction].Severity)
	assert.Contains(t, f[IDEviction].Summary, "every node: ")
	assert.Equal(t, Warn, rep.Worst())

	// A user missing EVALSHA on one master only, and no ACL: named, with
	// the node.
	n1 := tg.Nodes[1]
	acl(t, n1.Client, "default", "-evalsha")
	f = byID(t, runOK(t, tg))
	assert.Equal(t, Danger, f[IDACL].Severity)
	assert.Contains(t, f[IDACL].Summary, "EVALSHA")
	assert.Contains(t, f[IDACL].Detail, n1.Addr)
	acl(t, n1.Client, "default", "+evalsha")

	// A slot nobody serves.
	_, err := tg.Nodes[0].Client.Do(context.Background(), "CLUSTER", "DELSLOTS", "0")
	require.NoError(t, err)
	f = byID(t, runOK(t, tg))
	assert.Equal(t, Danger, f[IDClusterSlots].Severity, "%+v", f[IDClusterSlots])
	assert.Contains(t, f[IDClusterSlots].Detail, "16383 of 16384")
}

func TestDoctorNamespace(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c := client(t, srv.Addr(), "")
	ctx := context.Background()
	const ns = "doctor-ns"

	f := byID(t, runOK(t, single(c, srv.Addr()), WithNamespace(ns)))[IDNamespace]
	assert.Equal(t, Warn, f.Severity, "not started yet: a warning, with the command: %+v", f)
	assert.Contains(t, f.Summary, "not initialised")
	assert.Equal(t, "lockbridge phase init --namespace "+ns, f.Fix)
	ctl, err := migrate.NewController(c, ns, migrate.WithInitSilence(time.Millisecond))
	require.NoError(t, err)
	_, err = ctl.Init(ctx, false)
	require.NoError(t, err)
	f = byID(t, runOK(t, single(c, srv.Addr()), WithNamespace(ns)))[IDNamespace]
	assert.Equal(t, OK, f.Severity, "%+v", f)
	assert.Contains(t, f.Summary, `namespace "doctor-ns" at legacy`)

	// A client deployed with a fixed legacy phase, and the fleet forced to
	// dual-read: the two do not exclude each other.
	l := migrate.New(c, migrate.WithPhase(migrate.PhaseLegacy), migrate.WithNamespace(ns),
		migrate.WithPhaseInterval(time.Hour))
	defer l.Close(ctx)
	_, err = l.Phase(ctx)
	require.NoError(t, err)
	f = byID(t, runOK(t, single(c, srv.Addr()), WithNamespace(ns)))[IDNamespace]
	assert.Equal(t, OK, f.Severity, "%+v", f)
	assert.Contains(t, f.Summary, "1 at legacy")
	_, err = ctl.Step(ctx, migrate.PhaseLegacy, migrate.PhaseDualWrite, true)
	require.NoError(t, err)
	f = byID(t, runOK(t, single(c, srv.Addr()), WithNamespace(ns)))[IDNamespace]
	assert.Equal(t, OK, f.Severity, "legacy beside dual-write exclude each other: %+v", f)
	assert.Contains(t, f.Detail, "blocked")
	_, err = ctl.Step(ctx, migrate.PhaseDualWrite, migrate.PhaseDualRead, true)
	require.NoError(t, err)
	rep := runOK(t, single(c, srv.Addr()), WithNamespace(ns))
	f = byID(t, rep)[IDNamespace]
	assert.Equal(t, Danger, f.Severity, "%+v", f)
	assert.Contains(t, f.Summary, "live clients run legacy and dual-read, which do not exclude each other")
	assert.Equal(t, Danger, rep.Worst())

	// A legacy-only locker seen after the fleet moved to dual-read, with no
	// lagging client registered.
	const ns2 = "doctor-sighting"
	ctl2, err := migrate.NewController(c, ns2, migrate.WithInitSilence(time.Millisecond))
	require.NoError(t, err)
	_, err = ctl2.Init(ctx, false)
	require.NoError(t, err)
	_, err = ctl2.Step(ctx, migrate.PhaseLegacy, migrate.PhaseDualWrite, true)
	require.NoError(t, err)
	_, err = ctl2.Step(ctx, migrate.PhaseDualWrite, migrate.PhaseDualRead, true)
	require.NoError(t, err)
	f = byID(t, runOK(t, single(c, srv.Addr()), WithNamespace(ns2)))[IDNamespace]
	assert.Equal(t, OK, f.Severity, "%+v", f)
	exp, ok, err := javareplay.Lock(ctx, c, "doctor:orders:1", time.Minute, nil)
	require.NoError(t, err)
	require.True(t, ok)
	dr := migrate.New(c, migrate.WithPhase(migrate.PhaseDualRead), migrate.WithNamespace(ns2))
	_, err = dr.TryLock(ctx, "doctor:orders:1", time.Second)
	require.Error(t, err, "the Java lock is held")
	require.NoError(t, dr.Close(ctx))
	require.NoError(t, javareplay.Unlock(ctx, c, "doctor:orders:1", exp, nil))
	f = byID(t, runOK(t, single(c, srv.Addr()), WithNamespace(ns2)))[IDNamespace]
	assert.Equal(t, Danger, f.Severity, "%+v", f)
	assert.Contains(t, f.Summary, `a legacy-only locker was seen at`)
	assert.Contains(t, f.Summary, `"doctor:orders:1", after the fleet moved to dual-read`)

	// A phase key lockbridge cannot read.
	_, err = c.Do(ctx, "SET", "lockbridge:{doctor-bad}:phase", "sideways")
	require.NoError(t, err)
	f = byID(t, runOK(t, single(c, srv.Addr()), WithNamespace("doctor-bad")))[IDNamespace]
	assert.Equal(t, Danger, f.Severity, "%+v", f)
	assert.Contains(t, f.Summary, "sideways")
}

func TestDoctorBadInput(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c := client(t, srv.Addr(), "")
	good := single(c, srv.Addr())
	for name, tc := range map[string]struct {
		ctx  context.Context
		tg   Target
		opts []Option
	}{
		"nil context":     {nil, good, nil}, //nolint:staticcheck // the case under test
		"nil client":      {context.Background(), Target{Nodes: good.Nodes}, nil},
		"no nodes":        {context.Background(), Target{Client: c}, nil},
		"node no client":  {context.Background(), Target{Client: c, Nodes: []Node{{Addr: "x"}}}, nil},
		"empty namespace": {context.Background(), good, []Option{WithNamespace("")}},
		"braced ns":       {context.Background(), good, []Option{WithNamespace("a{b}")}},
		"zero timeout":    {context.Background(), good, []Option{WithTimeout(0)}},
		"nil clock":       {context.Background(), good, []Option{WithClock(nil)}},
		"nil option":      {context.Background(), good, []Option{nil}},
	} {
		_, err := Run(tc.ctx, tc.tg, tc.opts...)
		assert.ErrorIs(t, err, lockbridge.ErrInvalid, name)
		assert.True(t, strings.HasPrefix(err.Error(), "doctor: "), name)
	}
}

func TestDoctorUnreachableNode(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	srv.Stop()
	gc := goredislib.NewClient(&goredislib.Options{Addr: srv.Addr(), MaxRetries: -1, DialerRetries: 1})
	t.Cleanup(func() { _ = gc.Close() })
	c := goredis.New(gc)
	rep, err := Run(context.Background(), single(c, srv.Addr()), WithTimeout(200*time.Millisecond))
	require.NoError(t, err, "Redis errors are findings, not errors")
	for _, f := range rep.Findings {
		assert.Equal(t, Unknown, f.Severity, "%+v", f)
	}
}

func TestDoctorClassify(t *testing.T) {
	t.Parallel()
	for msg, want := range map[string]access{
		"OK": allowed,
		"NOPERM this user has no permissions to run the 'evalsha' command":                        deniedCommand,
		"This user has no permissions to run the 'evalsha' command":                               deniedCommand,
		"ERR The user executing the script can't run this command or subcommand":                  deniedCommand,
		"NOPERM this user has no permissions to access one of the keys used as arguments":         deniedKey,
		"This user has no permissions to access the 'x' key":                                      deniedKey,
		"ERR The user executing the script can't access at least one of the keys mentioned":       deniedKey,
		"NOPERM this user has no permissions to access one of the channels used as arguments":     deniedChannel,
		"This user has no permissions to access the 'ch' channel":                                 deniedChannel,
		"ERR The user executing the script can't publish to the channel mentioned in the command": deniedChannel,
		"ERR unknown command 'SPUBLISH', with args beginning with: 'x' 'y' ":                      missing,
		"ERR Command 'nope' not found":                                                            missing,
		"NOSCRIPT No matching script. Please use EVAL.":                                           allowed,
		"WRONGTYPE Operation against a key holding the wrong kind of value":                       allowed,
		"NOPERM something new":                                  deniedCommand,
		"READONLY You can't write against a read only replica.": allowed,
	} {
		assert.Equal(t, want, classify(msg), msg)
	}
	assert.Equal(t, noAnswer, classifyErr(context.DeadlineExceeded))
	assert.Equal(t, deniedCommand, classifyErr(errors.Join(errors.New("driver: subscription lost"),
		errors.New("NOPERM this user has no permissions to run the 'subscribe' command"))))
	assert.Equal(t, allowed, classifyErr(driver.ReplyError("NOSCRIPT x")))
}

func TestDoctorSeverityText(t *testing.T) {
	t.Parallel()
	for s, want := range map[Severity]string{OK: "ok", Warn: "warn", Unknown: "unknown", Danger: "danger"} {
		b, err := s.MarshalText()
		require.NoError(t, err)
		assert.Equal(t, want, string(b))
	}
	_, err := Severity(9).MarshalText()
	assert.ErrorIs(t, err, lockbridge.ErrInvalid)
}
