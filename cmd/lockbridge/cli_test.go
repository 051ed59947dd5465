package main

import (
	"net"
	"strings"
	"testing"

	"github.com/lockbridge/lockbridge/internal/testing/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHelp(t *testing.T) {
	t.Parallel()
	r := cli(t, "", nil, "--help")
	assert.Equal(t, 0, r.code)
	for _, c := range []string{"demo", "inspect", "phase", "fleet", "unlock", "doctor"} {
		assert.Contains(t, r.stdout, "  "+c+" ")
	}
	assert.Empty(t, r.stderr)

	for _, args := range [][]string{
		{"demo", "--help"}, {"inspect", "-h"}, {"phase", "--help"}, {"fleet", "--help"},
		{"unlock", "--help"}, {"help", "demo"}, {"inspect", "somekey", "--help"},
	} {
		r := cli(t, "", nil, args...)
		cmd := args[0]
		if cmd == "help" {
			cmd = args[1]
		}
		assert.Equal(t, 0, r.code, "%v", args)
		assert.Equal(t, 1, strings.Count(r.stdout, "Usage: lockbridge "+cmd+" "), "%v: %s", args, r.stdout)
		assert.Contains(t, r.stdout, "-redis", "%v", args)
		assert.Empty(t, r.stderr, "%v", args)
	}
	r = cli(t, "", nil, "demo", "--help")
	assert.Contains(t, r.stdout, "Exit codes")
	for _, f := range []string{"-duration", "-java", "-go", "-locks", "-lease", "-quiet"} {
		assert.Contains(t, r.stdout, f)
	}

	r = cli(t, "", nil)
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "Usage:")
}

func TestBadUsage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"demo", "--duration", "soon"}, `invalid argument "soon" for "--duration" flag`},
		{[]string{"demo", "--nope"}, "unknown flag: --nope"},
		{[]string{"demo", "extra"}, "demo takes no arguments"},
		{[]string{"demo", "--go", "0"}, "--go >= 1"},
		{[]string{"demo", "--duration", "1s"}, "too short"},
		{[]string{"demo", "--lease", "1ms"}, "lease 1ms"},
		{[]string{"demo", "--namespace", "a{b}"}, "namespace"},
		{[]string{"inspect"}, "inspect takes one non-empty KEY"},
		{[]string{"inspect", "a", "b"}, "inspect takes one non-empty KEY"},
		{[]string{"inspect", "k", "--key-codec", "xml"}, `bad --key-codec "xml"`},
		{[]string{"inspect", "\xff", "--key-codec", "jdk-string"}, "cannot be encoded with the jdk-string key codec"},
		{[]string{"phase"}, "want get, set, init or repair"},
		{[]string{"phase", "jump"}, `unknown subcommand "jump"`},
		{[]string{"phase", "set"}, "phase set takes one PHASE"},
		{[]string{"phase", "set", "sideways"}, "sideways"},
		{[]string{"phase", "get", "extra"}, "phase get takes no arguments"},
		{[]string{"fleet", "extra"}, "fleet takes no arguments"},
		{[]string{"unlock", "k"}, "add --force"},
		{[]string{"unlock", "--force"}, "unlock takes one non-empty KEY"},
		{[]string{"fleet"}, "no Redis to talk to"},
		{[]string{"fleet", "--timeout", "0s", "--redis", "redis://127.0.0.1:1"}, "--timeout"},
		{[]string{"fleet", "--cluster", "a:1,,b:2"}, "bad --cluster address"},
	} {
		r := cli(t, "", nil, tc.args...)
		oneLineError(t, r, 2, tc.want)
	}
}

func TestConnectionErrors(t *testing.T) {
	t.Parallel()
	// A port nothing listens on.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	dead := l.Addr().String()
	require.NoError(t, l.Close())

	for _, tc := range []struct {
		env  []string
		args []string
		code int
		want string
	}{
		{nil, []string{"phase", "get", "--redis", "http://localhost:6379"}, 2,
			"bad Redis URL http://localhost:6379: invalid URL scheme: http"},
		{nil, []string{"phase", "get", "--redis", "redis://localhost:6379/notadb"}, 2, "bad Redis URL"},
		{nil, []string{"phase", "get", "--redis", "redis://user:s3cret@localhost:abc"}, 2, "bad Redis URL"},
		{nil, []string{"fleet", "--redis", "not a url"}, 2, "bad Redis URL"},
		{[]string{"REDIS_URL=ftp://x"}, []string{"fleet"}, 2, "bad Redis URL ftp://x"},
		{nil, []string{"phase", "get", "--redis", "redis://" + dead}, 1, "cannot reach Redis " + dead + ": dial tcp " + dead},
		{[]string{"REDIS_URL=redis://" + dead}, []string{"inspect", "k"}, 1, "cannot reach Redis " + dead},
		{nil, []string{"unlock", "--force", "k", "--redis", "redis://:s3cret@" + dead}, 1, "cannot reach Redis"},
		{nil, []string{"fleet", "--cluster", dead}, 1, "cannot reach Redis Cluster " + dead},
		{nil, []string{"demo", "--redis", "redis://" + dead}, 1, "cannot reach Redis " + dead},
		{nil, []string{"demo", "--redis", "rediss://" + dead}, 1, "cannot reach Redis " + dead},
	} {
		r := cli(t, "", tc.env, tc.args...)
		oneLineError(t, r, tc.code, tc.want)
		assert.NotContains(t, r.stderr, "s3cret", "passwords stay out of messages")
	}

	// A server that accepts connections and never answers.
	mute, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer mute.Close()
	go func() {
		for {
			c, err := mute.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	r := cli(t, "", nil, "fleet", "--redis", "redis://"+mute.Addr().String(), "--timeout", "300ms")
	oneLineError(t, r, 1, "cannot reach Redis "+mute.Addr().String()+": no answer within 300ms")

	// A server that is there but refuses the password.
	srv := redistest.Start(t)
	r = cli(t, "", nil, "phase", "get", "--redis", "redis://nobody:s3cret@"+srv.Addr())
	oneLineError(t, r, 1, "Redis "+srv.Addr()+" refused the credentials: WRONGPASS")
	assert.NotContains(t, r.stderr, "s3cret")
	// A database number and REDIS_URL are honoured.
	r = cli(t, "", []string{"REDIS_URL=" + srv.URL() + "/3"}, "phase", "init", "--silence", "10ms", "--namespace", "n")
	assert.Equal(t, 0, r.code, r.stderr)
	r = cli(t, "", []string{"REDIS_URL=" + srv.URL() + "/3"}, "phase", "get", "--namespace", "n")
	assert.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "legacy\n", r.stdout)
	// A non-cluster server given as a cluster.
	r = cli(t, "", nil, "fleet", "--cluster", srv.Addr())
	oneLineError(t, r, 1, "Redis "+srv.Addr()+" is not a cluster")
}
