package main

import (
	"context"
	"net"
	"strings"
	"testing"

	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/internal/testing/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// finding returns the line of a doctor report that starts a finding.
func finding(t *testing.T, out, id string) string {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[1] == id+":" {
			return line
		}
	}
	t.Fatalf("no finding %q in:\n%s", id, out)
	return ""
}

func TestDoctorCleanServerExitsZero(t *testing.T) {
	t.Parallel()
	_, env := server(t)
	r := cli(t, "", env, "doctor")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr: %s", r.stdout, r.stderr)
	assert.Empty(t, r.stderr)
	assert.Contains(t, r.stdout, `lockbridge doctor: Redis 127.0.0.1:`)
	assert.Contains(t, r.stdout, `user "default"`)
	assert.Regexp(t, `^OK +eviction: maxmemory-policy noeviction`, finding(t, r.stdout, "eviction"))
	assert.Regexp(t, `^WARN +persistence: appendonly no`, finding(t, r.stdout, "persistence"))
	assert.Regexp(t, `^OK +acl: user "default" may run all [0-9]+ commands`, finding(t, r.stdout, "acl"))
	assert.Regexp(t, `^OK +clock: .*informational only`, finding(t, r.stdout, "clock"))
	assert.Contains(t, r.stdout, "\n0 dangerous, 0 could not tell, 1 warning, 5 ok\n")
	assert.NotContains(t, r.stdout, "cluster-slots", "no cluster checks on a single server")
	// The warning's detail and fix are shown; an ok finding's detail only
	// with --verbose.
	assert.Contains(t, r.stdout, "fix: CONFIG SET appendonly yes")
	assert.NotContains(t, r.stdout, "checked: ")
	r = cli(t, "", env, "doctor", "--verbose")
	assert.Contains(t, r.stdout, "checked: ")
}

func TestDoctorEvictionPolicyIsDangerous(t *testing.T) {
	t.Parallel()
	c, env := server(t)
	_, err := c.Do(context.Background(), "CONFIG", "SET", "maxmemory-policy", "allkeys-lru")
	require.NoError(t, err)
	r := cli(t, "", env, "doctor")
	oneLineError(t, r, 1, "lockbridge: doctor: dangerous: eviction")
	assert.Regexp(t, `^DANGER +eviction: maxmemory-policy allkeys-lru can evict any lock or namespace key`,
		strings.Split(r.stdout, "\n")[2], "the dangers come first")
	assert.Contains(t, r.stdout, "fix: CONFIG SET maxmemory-policy noeviction")
	assert.Contains(t, r.stdout, "\n1 dangerous, ")
}

func TestDoctorACLUserMissingEvalsha(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	admin := locktest.GoRedis(t, srv)
	for user, rules := range map[string][]any{
		"nosha":    {"~*", "&*", "+@all", "-evalsha"},         // ACL DRYRUN
		"noshaacl": {"~*", "&*", "+@all", "-evalsha", "-acl"}, // probed by use
	} {
		_, err := admin.Do(context.Background(), append([]any{"ACL", "SETUSER", user, "on", ">s3cret"}, rules...)...)
		require.NoError(t, err)
		r := cli(t, "", nil, "doctor", "--redis", "redis://"+user+":s3cret@"+srv.Addr())
		oneLineError(t, r, 1, "lockbridge: doctor: dangerous: acl")
		line := finding(t, r.stdout, "acl")
		assert.Regexp(t, `^DANGER +acl: user "`+user+`" may not run EVALSHA: every script`, line)
		assert.Contains(t, r.stdout, "fix: ACL SETUSER "+user+" +evalsha")
		assert.NotContains(t, r.stdout+r.stderr, "s3cret")
	}
}

func TestDoctorLeastPrivilegeCouldNotTell(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	admin := locktest.GoRedis(t, srv)
	_, err := admin.Do(context.Background(), "ACL", "SETUSER", "app", "on", ">pw", "~*", "&*", "+@all", "-config", "-info",
		"-acl")
	require.NoError(t, err)
	r := cli(t, "", nil, "doctor", "--redis", "redis://app:pw@"+srv.Addr())
	oneLineError(t, r, 6,
		"lockbridge: doctor: nothing dangerous found, but could not tell: eviction, replication, persistence")
	for _, id := range []string{"eviction", "replication", "persistence"} {
		assert.Regexp(t, `^UNKNOWN +`+id+`: could not read`, finding(t, r.stdout, id))
	}
	// The rest is still probed.
	assert.Regexp(t, `^WARN +acl: user "app" may not run INFO`, finding(t, r.stdout, "acl"))
	assert.Regexp(t, `^OK +scripting: `, finding(t, r.stdout, "scripting"))
}

func TestDoctorCluster(t *testing.T) {
	t.Parallel()
	cl := redistest.StartCluster(t)
	r := cli(t, "", nil, "doctor", "--cluster", strings.Join(cl.Addrs(), ","))
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr: %s", r.stdout, r.stderr)
	assert.Contains(t, r.stdout, "lockbridge doctor: Redis Cluster ")
	assert.Regexp(t, `^OK +cluster-slots: all 16384 slots served by 3 masters, cluster_state ok`, finding(t, r.stdout,
		"cluster-slots"))
	assert.Regexp(t, `^OK +sharded-pubsub: every node: sharded pub/sub works`, finding(t, r.stdout, "sharded-pubsub"))
	assert.Regexp(t, `^OK +acl: `, finding(t, r.stdout, "acl"))
}

func TestDoctorNamespaceFlag(t *testing.T) {
	t.Parallel()
	_, env := server(t)
	r := cli(t, "", env, "doctor", "--namespace", "shop")
	// Before 'phase init': not a danger (exit 0 with the server's warnings),
	// and the command that starts it.
	require.Equal(t, 0, r.code, "a namespace not started yet\n%s", r.stdout)
	assert.Regexp(t, "^WARN +namespace: namespace \"shop\" not initialised: lockers that follow it refuse to lock until "+
		"`lockbridge phase init --namespace shop`",
		finding(t, r.stdout, "namespace"))
	assert.Contains(t, r.stdout, "fix: lockbridge phase init --namespace shop")
	assert.NotContains(t, r.stdout, "DANGER")
	r = cli(t, "", env, "phase", "init", "--silence", "10ms", "--namespace", "shop")
	require.Equal(t, 0, r.code, r.stderr)
	r = cli(t, "", env, "doctor", "--namespace", "shop")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Regexp(t, `^OK +namespace: namespace "shop" at legacy`, finding(t, r.stdout, "namespace"))
	r = cli(t, "", append(env, "LOCKBRIDGE_NAMESPACE=shop"), "doctor")
	assert.Regexp(t, `^OK +namespace: `, finding(t, r.stdout, "namespace"))
}

func TestDoctorNoServer(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	dead := l.Addr().String()
	require.NoError(t, l.Close())
	r := cli(t, "", nil, "doctor", "--redis", "redis://"+dead)
	oneLineError(t, r, 1, "cannot reach Redis "+dead)
	assert.Empty(t, r.stdout)
	r = cli(t, "", nil, "doctor", "--cluster", dead)
	oneLineError(t, r, 1, "cannot reach Redis Cluster "+dead)

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"doctor"}, "no Redis to talk to"},
		{[]string{"doctor", "extra", "--redis", "redis://" + dead}, "doctor takes no arguments"},
		{[]string{"doctor", "--namespace", "a{b}", "--redis", "redis://" + dead}, "namespace"},
		{[]string{"doctor", "--timeout", "0s", "--redis", "redis://" + dead}, "--timeout"},
		{[]string{"doctor", "--redis", "http://x"}, "bad Redis URL"},
	} {
		oneLineError(t, cli(t, "", nil, tc.args...), 2, tc.want)
	}
}

func TestDoctorHelp(t *testing.T) {
	t.Parallel()
	r := cli(t, "", nil, "doctor", "--help")
	require.Equal(t, 0, r.code)
	for _, s := range []string{"Usage: lockbridge doctor [flags]", "Exit codes:", "0 nothing dangerous",
		"1 something is dangerous", "6 some check could not tell", "-namespace", "-verbose", "maxmemory-policy"} {
		assert.Contains(t, r.stdout, s)
	}
	r = cli(t, "", nil, "--help")
	assert.Contains(t, r.stdout, "  doctor ")
	assert.Contains(t, r.stdout, "6 doctor could not tell")
}
