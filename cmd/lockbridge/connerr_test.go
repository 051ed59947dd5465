package main

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/lockbridge/lockbridge/internal/testing/redistest"
	goredislib "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestConnectionDiagnoses: credentials, TLS, cluster mode, database and
// port each get their own message, as docs/cli.md promises.
func TestConnectionDiagnoses(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	addr := srv.Addr()
	ctx := context.Background()
	rc := goredislib.NewClient(&goredislib.Options{Addr: addr})
	require.NoError(t, rc.Do(ctx, "ACL", "SETUSER", "ops", "on", ">opspass", "~*", "&*", "+@all").Err())
	require.NoError(t, rc.ConfigSet(ctx, "requirepass", "s3cret").Err())
	require.NoError(t, rc.Close())

	for _, tc := range []struct {
		url, want string
	}{
		{"redis://" + addr, "Redis " + addr + " wants a password: NOAUTH"},
		{"redis://:wrong@" + addr, "Redis " + addr + " refused the credentials: WRONGPASS"},
		{"redis://ops:wrong@" + addr, "Redis " + addr + " refused the credentials: WRONGPASS"},
		{"redis://nobody:s3cret@" + addr, "Redis " + addr + " refused the credentials: WRONGPASS"},
		{"redis://:s3cret@" + addr + "/99", "Redis " + addr + " has no such database"},
	} {
		r := cli(t, "", nil, "fleet", "--redis", tc.url)
		oneLineError(t, r, 1, tc.want)
		assert.NotContains(t, r.stderr, "cannot reach", tc.url)
		assert.NotContains(t, r.stderr, "s3cret")
	}
	// The right credentials pass (the namespace is not initialised: exit 4).
	for _, u := range []string{"redis://:s3cret@" + addr, "redis://ops:opspass@" + addr} {
		r := cli(t, "", nil, "fleet", "--redis", u)
		assert.Equal(t, 4, r.code, r.stderr)
		assert.Contains(t, r.stdout, "namespace default: phase UNKNOWN")
	}

	// A server without cluster mode given as a cluster.
	plain := redistest.Start(t)
	r := cli(t, "", nil, "fleet", "--cluster", plain.Addr())
	oneLineError(t, r, 1, "Redis "+plain.Addr()+" is not a cluster")
	assert.Contains(t, r.stderr, "--redis redis://")

	// rediss:// against a plain-text server: it waits for a line and never
	// answers the handshake.
	start := time.Now()
	r = cli(t, "", nil, "fleet", "--redis", "rediss://"+plain.Addr(), "--timeout", "500ms")
	oneLineError(t, r, 1,
		"Redis "+plain.Addr()+": the TLS handshake failed: no answer to it within 500ms (the server may not speak TLS")
	assert.Less(t, time.Since(start), 5*time.Second)
	// A server that answers the handshake with a plain-text error: said at
	// once, not after --timeout.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			_, _ = c.Read(make([]byte, 512))
			_, _ = c.Write([]byte("-ERR unknown command\r\n"))
			_ = c.Close()
		}
	}()
	start = time.Now()
	r = cli(t, "", nil, "fleet", "--redis", "rediss://"+l.Addr().String(), "--timeout", "30s")
	oneLineError(t, r, 1,
		"the TLS handshake failed: tls: first record does not look like a TLS handshake (the server may not speak TLS")
	assert.Less(t, time.Since(start), 10*time.Second, "a failed handshake does not wait for --timeout")
	r = cli(t, "", nil, "fleet", "--cluster", l.Addr().String(), "--redis", "rediss://"+l.Addr().String(), "--timeout",
		"30s")
	oneLineError(t, r, 1, "the TLS handshake failed")

	// Ports out of range are usage errors.
	for _, args := range [][]string{
		{"fleet", "--redis", "redis://127.0.0.1:99999"},
		{"fleet", "--redis", "redis://127.0.0.1:0"},
		{"fleet", "--cluster", "127.0.0.1:6379,127.0.0.1:70000"},
	} {
		r := cli(t, "", nil, args...)
		oneLineError(t, r, 2, "want a number from 1 to 65535")
	}
}
