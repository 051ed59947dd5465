package main

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/internal/testing/javareplay"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/internal/testing/redistest"
	"github.com/lockbridge/lockbridge/legacy"
	"github.com/lockbridge/lockbridge/migrate"
	"github.com/lockbridge/lockbridge/modern"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// server starts a redis-server and returns a client on it and the
// environment that points the CLI at it.
func server(t *testing.T) (driver.Client, []string) {
	t.Helper()
	srv := redistest.Start(t)
	return locktest.GoRedis(t, srv), []string{"REDIS_URL=" + srv.URL()}
}

// srvAddr is the host:port of the REDIS_URL in env.
func srvAddr(env []string) string {
	for _, kv := range env {
		if strings.HasPrefix(kv, "REDIS_URL=redis://") {
			return strings.TrimPrefix(kv, "REDIS_URL=redis://")
		}
	}
	return ""
}

// section returns the part of an inspect output that starts with head and
// ends before the next blank line.
func section(t *testing.T, out, head string) string {
	t.Helper()
	i := strings.Index(out, head)
	require.NotEqual(t, -1, i, "no %q in:\n%s", head, out)
	s := out[i:]
	if j := strings.Index(s, "\n\n"); j >= 0 {
		s = s[:j]
	}
	return s
}

func TestInspect(t *testing.T) {
	t.Parallel()
	c, env := server(t)
	ctx := context.Background()

	t.Run("java-written value", func(t *testing.T) {
		exp, ok, err := javareplay.Lock(ctx, c, "orders:42", time.Minute, nil)
		require.NoError(t, err)
		require.True(t, ok)
		r := cli(t, "", env, "inspect", "orders:42")
		require.Equal(t, 0, r.code, r.stderr)
		lk := section(t, r.stdout, `legacy key "orders:42" (raw key codec): 13 bytes, no TTL`)
		v := time.UnixMilli(exp).UTC().Format(timeLayout)
		assert.Regexp(t, `decimal +\d{13} \(ms\) = `+regexp.QuoteMeta(v)+`: live, [0-9.]+s left`, lk)
		assert.Regexp(t, `json-number +\d{13} \(ms\) = `, lk)
		for _, codec := range []string{"jdk-string", "jdk-long", "json-string"} {
			assert.Regexp(t, codec+` +does not parse`, lk)
		}
		assert.NotContains(t, lk, "FOREIGN")
		assert.Contains(t, r.stdout, `modern key "{orders:42}:modern" (migrate): absent`)
		assert.Contains(t, r.stdout,
			`legacy key "\xac\xed\x00\x05t\x00\torders:42" (jdk-string key codec): absent, and no modern key`)

		// Expired, and in seconds (the redis.io recipe).
		_, err = c.Do(ctx, "SET", "old", "1700000000001")
		require.NoError(t, err)
		_, err = c.Do(ctx, "SET", "old:s", "1700000000")
		require.NoError(t, err)
		r = cli(t, "", env, "inspect", "old", "--key-codec", "raw")
		assert.Contains(t, r.stdout, "decimal      1700000000001 (ms) = 2023-11-14 22:13:20.001 UTC: expired (")
		assert.NotContains(t, r.stdout, "jdk-string key codec", "--key-codec raw looks at the raw key only")
		r = cli(t, "", env, "inspect", "old:s", "--key-codec", "raw")
		assert.Contains(t, r.stdout, "decimal      1700000000 (s) = 2023-11-14 22:13:20.000 UTC: expired (")
	})

	t.Run("jdk-serialized key", func(t *testing.T) {
		l := legacy.New(c, legacy.WithKeyCodec(legacy.KeyJavaString), legacy.WithValueCodec(legacy.ValueJavaLong))
		lk, err := l.TryLock(ctx, "spring:lock", time.Minute)
		require.NoError(t, err)
		for _, kc := range []string{"auto", "jdk-string", "java-string"} {
			r := cli(t, "", env, "inspect", "--key-codec", kc, "spring:lock")
			require.Equal(t, 0, r.code, r.stderr)
			s := section(t, r.stdout, `legacy key "\xac\xed\x00\x05t\x00\vspring:lock" (jdk-string key codec): 82 bytes, no TTL`)
			assert.Contains(t, s, `bytes        "\xac\xed\x00\x05sr\x00\x0ejava.lang.Long;`)
			assert.Regexp(t, `jdk-long +`+lk.Token()+` \(ms\) = .*: live, `, s)
			assert.Regexp(t, `decimal +does not parse`, s)
			if kc == "auto" {
				assert.Contains(t, r.stdout, `legacy key "spring:lock" (raw key codec): absent, and no modern key`)
			}
		}
		r := cli(t, "", env, "inspect", "--key-codec", "raw", "spring:lock")
		assert.Contains(t, r.stdout, `legacy key "spring:lock" (raw key codec): absent`)
	})

	t.Run("modern lock", func(t *testing.T) {
		lk, err := modern.New(c, modern.WithFencing()).TryLock(ctx, "invoice:7", time.Minute)
		require.NoError(t, err)
		r := cli(t, "", env, "inspect", "invoice:7")
		require.Equal(t, 0, r.code, r.stderr)
		s := section(t, r.stdout, `legacy key "invoice:7" (raw key codec): 22 bytes, PTTL `)
		assert.Contains(t, s, "with its TTL it is a modern lock: token \""+lk.Token()+"\", PTTL ")
		assert.Contains(t, s, `fence  "{invoice:7}:fence" = "`+strconv.FormatInt(lk.(*modern.Lock).Fence(),
			10)+`" (the last fencing token handed out)`)
		assert.NotContains(t, s, "FOREIGN")

		// A migrate lock in dual-write: both keys, the modern one fenced.
		ml, err := migrate.New(c, migrate.WithPhase(migrate.PhaseDualWrite),
			migrate.WithModern(modern.WithFencing())).TryLock(ctx, "pay:1", time.Minute)
		require.NoError(t, err)
		r = cli(t, "", env, "inspect", "pay:1")
		s = section(t, r.stdout, `modern key "{pay:1}:modern" (migrate): 22 bytes, PTTL `)
		assert.Contains(t, s, `token  "`+ml.Token()+`"`)
		assert.Contains(t, s, `fence  "{pay:1}:modern:fence" = "`+strconv.FormatInt(ml.(interface{ Fence() int64 }).Fence(),
			10)+`"`)
		assert.Regexp(t, `decimal +\d{13} \(ms\) = .*: live`, section(t, r.stdout, `legacy key "pay:1" (raw key codec)`))
	})

	t.Run("foreign value", func(t *testing.T) {
		_, err := c.Do(ctx, "SET", "weird", "uuid:1234:\x00\xff\"\u202e")
		require.NoError(t, err)
		r := cli(t, "", env, "inspect", "weird")
		require.Equal(t, 0, r.code, r.stderr)
		s := section(t, r.stdout, `legacy key "weird" (raw key codec): 16 bytes, no TTL`)
		assert.Contains(t, s, `bytes        "uuid:1234:\x00\xff\"\xe2\x80\xae"`)
		assert.Contains(t, s, "FOREIGN: no legacy codec parses it")
		assert.NotContains(t, r.stdout, "\u202e", "control characters never reach the terminal")

		_, err = c.Do(ctx, "SET", "big", strings.Repeat("x", 10000))
		require.NoError(t, err)
		r = cli(t, "", env, "inspect", "big")
		assert.Contains(t, r.stdout, `"… (10000 bytes)`)
		assert.Less(t, len(r.stdout), 2000)

		_, err = c.Do(ctx, "HSET", "h", "f", "v")
		require.NoError(t, err)
		r = cli(t, "", env, "inspect", "h")
		assert.Equal(t, 0, r.code)
		assert.Contains(t, r.stdout, `legacy key "h" (raw key codec): a hash, not a lock`)

		r = cli(t, "", env, "inspect", "nothing:here")
		assert.Equal(t, 0, r.code)
		assert.Contains(t, r.stdout, "nothing is stored for this lock name under either key codec")
	})

	t.Run("namespace", func(t *testing.T) {
		r := cli(t, "", env, "inspect", "orders:42", "--namespace", "shop")
		assert.Contains(t, r.stdout, "namespace shop: phase UNKNOWN (namespace not initialised), 0 live clients")
		r = cli(t, "", env, "phase", "init", "--silence", "10ms", "--namespace", "shop")
		require.Equal(t, 0, r.code, r.stderr)
		r = cli(t, "", env, "inspect", "orders:42", "--namespace", "shop")
		assert.Contains(t, r.stdout, "namespace shop: phase legacy")
		r = cli(t, "", append(env, "LOCKBRIDGE_NAMESPACE=shop"), "inspect", "orders:42")
		assert.Contains(t, r.stdout, "namespace shop: phase legacy")
		r = cli(t, "", env, "inspect", "orders:42")
		assert.NotContains(t, r.stdout, "namespace")
	})
}

func TestPhaseAndFleet(t *testing.T) {
	t.Parallel()
	c, env := server(t)
	ctx := context.Background()
	ns := []string{"--namespace", "shop", "--quiet", "1h"}
	phase := func(args ...string) result {
		return cli(t, "", env, append(append([]string{"phase"}, args...), ns...)...)
	}

	// A namespace that never had a phase: lockers refuse, the operator
	// starts it.
	r := cli(t, "", env, "phase", "get", "--namespace", "shop")
	oneLineError(t, r, 1, "namespace not initialised")
	assert.Contains(t, r.stderr, "lockbridge phase init --namespace shop")
	r = cli(t, "", env, "phase", "init", "--silence", "10ms", "--namespace", "shop")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "namespace shop initialised at legacy on Redis "+srvAddr(env)+"\n", r.stdout)
	r = cli(t, "", env, "phase", "init", "--silence", "10ms", "--namespace", "shop")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "already initialised")
	r = cli(t, "", env, "phase", "get", "--namespace", "shop")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "legacy\n", r.stdout)

	// A client of the fleet deployed with a fixed phase: it lags.
	l := migrate.New(c, migrate.WithPhase(migrate.PhaseLegacy), migrate.WithNamespace("shop"),
		migrate.WithPhaseInterval(time.Hour))
	defer l.Close(ctx)
	_, err := l.Phase(ctx)
	require.NoError(t, err)

	r = cli(t, "", env, "fleet", "--namespace", "shop")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "namespace shop: phase legacy")
	assert.Regexp(t, `\S+-\d+-[0-9a-f]{12} +\S+ +\d+ +legacy +- +\d+ms ago +live`, r.stdout)
	assert.Contains(t, r.stdout, "legacy sighting: none recorded")
	assert.Contains(t, r.stdout, "next step: legacy → dual-write is safe")

	r = phase("set", "dual-write")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "namespace shop on Redis "+srvAddr(env)+": legacy → dual-write\n", r.stdout)

	// The client still runs legacy: refused, exit 4.
	r = phase("set", "dual-read")
	assert.Equal(t, 4, r.code)
	assert.Contains(t, r.stderr, "lockbridge: refusing dual-write → dual-read:")
	assert.Contains(t, r.stderr, "runs legacy, the fleet is at dual-write")
	assert.Contains(t, r.stderr, "less than the quiet period 1h0m0s")
	assert.Contains(t, r.stderr, "re-run with --force to override")
	r = cli(t, "", env, "phase", "get", "--namespace", "shop")
	assert.Equal(t, "dual-write\n", r.stdout, "a refused step changes nothing")

	r = cli(t, "", env, "fleet", "--namespace", "shop", "--quiet", "1h")
	assert.Contains(t, r.stdout, "next step: dual-write → dual-read is NOT safe:")

	// Two steps at once: never.
	r = phase("set", "modern", "--force")
	oneLineError(t, r, 4, "the fleet is at dual-write: it moves one step at a time, to dual-read or back to legacy")

	// A legacy sighting blocks too.
	exp, ok, err := javareplay.Lock(ctx, c, "orders:1", time.Minute, nil)
	require.NoError(t, err)
	require.True(t, ok)
	dw := migrate.New(c, migrate.WithPhase(migrate.PhaseDualWrite), migrate.WithNamespace("shop"))
	_, err = dw.TryLock(ctx, "orders:1", time.Second)
	require.Error(t, err)
	require.NoError(t, dw.Close(ctx))
	require.NoError(t, javareplay.Unlock(ctx, c, "orders:1", exp, nil))
	r = cli(t, "", env, "fleet", "--namespace", "shop")
	assert.Regexp(t, `legacy sighting: \S+ ago on key "orders:1" \(1 in all\)`, r.stdout)
	r = phase("set", "dual-read")
	assert.Equal(t, 4, r.code)
	assert.Contains(t, r.stderr, `a legacy-only locker was seen`)

	// --force takes it, loudly.
	r = phase("set", "dualread", "--force")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "namespace shop on Redis "+srvAddr(env)+": dual-write → dual-read\n", r.stdout)
	assert.Contains(t, r.stderr, "WARNING: forced past a blocker: ")
	assert.Contains(t, r.stderr, "WARNING: a forced step can let two holders in")

	// Rolling back is always allowed; setting the current phase is a no-op.
	r = phase("set", "dual-write")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "namespace shop on Redis "+srvAddr(env)+": dual-read → dual-write\n", r.stdout)
	r = phase("set", "Dual_Write")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "namespace shop on Redis "+srvAddr(env)+": already at dual-write\n", r.stdout)
	r = cli(t, "", env, "phase", "get", "--namespace", "shop")
	assert.Equal(t, "dual-write\n", r.stdout)

	// An empty namespace.
	r = cli(t, "", env, "fleet", "--namespace", "empty")
	assert.Contains(t, r.stdout, "(no clients registered)")
}

func TestUnlock(t *testing.T) {
	t.Parallel()
	c, env := server(t)
	ctx := context.Background()
	exists := func(k string) bool {
		n, err := c.Do(ctx, "EXISTS", k)
		require.NoError(t, err)
		return n == int64(1)
	}
	ml, err := migrate.New(c, migrate.WithPhase(migrate.PhaseDualWrite),
		migrate.WithModern(modern.WithFencing())).TryLock(ctx, "pay:9", time.Minute)
	require.NoError(t, err)

	// Declined: nothing deleted, exit 5.
	r := cli(t, "n\n", env, "unlock", "--force", "pay:9")
	oneLineError(t, r, 5, "unlock declined: nothing deleted")
	assert.Contains(t, r.stdout, `legacy key (raw key codec) "pay:9" = "`)
	assert.Contains(t, r.stdout, `modern key "{pay:9}:modern" = "`+ml.Token()+`" (PTTL `)
	assert.Contains(t, r.stdout, "Delete 2 key(s)?")
	r = cli(t, "", env, "unlock", "--force", "pay:9") // no answer at all (EOF)
	assert.Equal(t, 5, r.code)
	assert.True(t, exists("pay:9"))
	assert.True(t, exists("{pay:9}:modern"))

	// Confirmed: both keys go, the fence counter stays.
	r = cli(t, "yes\n", env, "unlock", "pay:9", "--force")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, `deleted legacy key (raw key codec) "pay:9"`)
	assert.Contains(t, r.stdout, `deleted modern key "{pay:9}:modern"`)
	assert.False(t, exists("pay:9"))
	assert.False(t, exists("{pay:9}:modern"))
	assert.True(t, exists("{pay:9}:modern:fence"))

	// --yes asks nothing; a JDK-serialized key is found too.
	_, err = legacy.New(c, legacy.WithKeyCodec(legacy.KeyJavaString)).TryLock(ctx, "spring:lock", time.Minute)
	require.NoError(t, err)
	r = cli(t, "", env, "unlock", "--force", "--yes", "spring:lock")
	require.Equal(t, 0, r.code, r.stderr)
	assert.NotContains(t, r.stdout, "Delete")
	assert.Contains(t, r.stdout, `deleted legacy key (jdk-string key codec) "\xac\xed\x00\x05t\x00\vspring:lock"`)

	// Nothing there.
	r = cli(t, "", env, "unlock", "--force", "--yes", "pay:9")
	assert.Equal(t, 0, r.code)
	assert.Contains(t, r.stdout, "nothing to unlock")

	// Not a lock.
	_, err = c.Do(ctx, "LPUSH", "queue", "x")
	require.NoError(t, err)
	r = cli(t, "", env, "unlock", "--force", "--yes", "queue")
	oneLineError(t, r, 1, `legacy key (raw key codec) "queue" is a list, not a lock: not deleting it`)
	assert.True(t, exists("queue"))
}

func TestCluster(t *testing.T) {
	t.Parallel()
	cl := redistest.StartCluster(t)
	c := locktest.GoRedisCluster(t, cl)
	addrs := strings.Join(cl.Addrs(), ",")
	ctx := context.Background()

	r := cli(t, "", nil, "phase", "init", "--silence", "10ms", "--force", "--cluster", addrs, "--namespace", "c")
	require.Equal(t, 0, r.code, r.stderr)
	r = cli(t, "", nil, "phase", "set", "dual-write", "--cluster", addrs, "--namespace", "c")
	require.Equal(t, 0, r.code, r.stderr)
	r = cli(t, "", nil, "phase", "get", "--cluster", addrs, "--namespace", "c")
	assert.Equal(t, "dual-write\n", r.stdout)

	lk, err := migrate.New(c, migrate.WithPhase(migrate.PhaseDualWrite)).TryLock(ctx, "orders:7", time.Minute)
	require.NoError(t, err)
	r = cli(t, "", nil, "inspect", "orders:7", "--cluster", addrs, "--namespace", "c")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, `token  "`+lk.Token()+`"`)
	assert.Contains(t, r.stdout, "namespace c: phase dual-write since ")

	r = cli(t, "", nil, "unlock", "orders:7", "--force", "--yes", "--cluster", addrs)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, `deleted modern key "{orders:7}:modern"`)

	// The end: cleanup on a cluster, the namespace's keys on one master and
	// the legacy keys on others.
	cleanupFleet(t, c, "end", migrate.PhaseModern, time.Hour)
	vals := legacyValues(t, c)
	r = cli(t, "", nil, "fleet", "cleanup", "--cluster", addrs, "--namespace", "end", "--key", "old", "--key", "live",
		"--key-codec", "raw")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, `removed legacy key (raw key codec) "old" = "`+vals["old"]+`"`)
	assert.Contains(t, r.stdout, `kept legacy key (raw key codec) "live": live`)
	assert.Contains(t, r.stdout, `removed the legacy sighting`)
	n, err := c.Do(ctx, "EXISTS", "old")
	require.NoError(t, err)
	assert.Equal(t, int64(0), n)
}

// Shortening the quiet period overrides the controller: it takes --force.
// Registry entries are shown with their escapes visible, never interpreted.
func TestPhaseSetGuards(t *testing.T) {
	t.Parallel()
	c, env := server(t)
	ctx := context.Background()
	r := cli(t, "", env, "phase", "init", "--silence", "10ms", "--namespace", "guards")
	require.Equal(t, 0, r.code, r.stderr)
	r = cli(t, "", env, "phase", "set", "dual-write", "--namespace", "guards", "--quiet", "1ms")
	oneLineError(t, r, 2, "--quiet 1ms is below the default 15m0s")
	r = cli(t, "", env, "phase", "get", "--namespace", "guards")
	assert.Equal(t, "legacy\n", r.stdout)

	_, err := c.Do(ctx, "HSET", "lockbridge:{guards}:fleet", "evil",
		`{"id":"x\u001b]0;PWNED\u0007\u001b[2J","host":"h\u001b[1A","phase":"legacy","seen":"2026-01-01T00:00:00Z","expires":"2999-01-01T00:00:00Z"}`)
	require.NoError(t, err)
	r = cli(t, "", env, "fleet", "--namespace", "guards")
	oneLineError(t, r, 4, "namespace guards: the next step legacy → dual-write is not safe (1 blockers)")
	assert.NotContains(t, r.stdout, "\x1b", "no raw escape reaches the terminal")
	assert.Contains(t, r.stdout, `"x\x1b]0;PWNED\a\x1b[2J"`)
	assert.NotContains(t, r.stdout, "is safe", "an entry that does not parse blocks")
	r = cli(t, "", env, "phase", "set", "dual-write", "--namespace", "guards")
	assert.Equal(t, 4, r.code)
	assert.NotContains(t, r.stderr, "\x1b")
	assert.Contains(t, r.stderr, `field "id"`)
	r = cli(t, "", env, "fleet", "forget", "evil", "--namespace", "guards")
	require.Equal(t, 0, r.code, r.stderr)
	r = cli(t, "", env, "phase", "set", "dual-write", "--namespace", "guards")
	require.Equal(t, 0, r.code, r.stderr)
	r = cli(t, "", env, "phase", "set", "dual-read", "--namespace", "guards")
	assert.Equal(t, 4, r.code)
	assert.NotContains(t, r.stderr, "\x1b")
}
