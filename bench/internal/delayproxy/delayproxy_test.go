package delayproxy_test

import (
	"bufio"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge/bench/internal/delayproxy"
	"github.com/lockbridge/lockbridge/bench/internal/redisserver"
)

// pings writes n PINGs at once on c and reads the n PONGs.
func pings(t *testing.T, c net.Conn, r *bufio.Reader, n int) {
	t.Helper()
	_, err := c.Write([]byte(strings.Repeat("PING\r\n", n)))
	require.NoError(t, err)
	for i := 0; i < n; i++ {
		line, err := r.ReadString('\n')
		require.NoError(t, err)
		require.Equal(t, "+PONG\r\n", line)
	}
}

// TestDelay: a round trip through the proxy takes at least the delay (it
// never delivers early), and 50 pipelined commands come back in about one
// round trip, not 50: frames are not serialized.
func TestDelay(t *testing.T) {
	srv, err := redisserver.Start()
	require.NoError(t, err)
	t.Cleanup(srv.Close)
	const rtt = 2 * time.Millisecond
	p, err := delayproxy.Start(srv.Addr(), rtt)
	require.NoError(t, err)
	t.Cleanup(p.Close)

	c, err := net.Dial("tcp", p.Addr())
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	r := bufio.NewReader(c)
	pings(t, c, r, 1) // connected

	for i := 0; i < 5; i++ {
		start := time.Now()
		pings(t, c, r, 1)
		require.GreaterOrEqual(t, time.Since(start), rtt)
	}
	start := time.Now()
	pings(t, c, r, 50)
	took := time.Since(start)
	require.GreaterOrEqual(t, took, rtt)
	require.Less(t, took, 25*rtt, "50 pipelined PINGs took %v: frames serialized", took)

	// The server ending its side ends the client's, after the delay.
	_, err = c.Write([]byte("QUIT\r\n"))
	require.NoError(t, err)
	line, err := r.ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "+OK\r\n", line)
	_, err = r.ReadString('\n')
	require.Error(t, err)
}

func TestNegativeDelay(t *testing.T) {
	_, err := delayproxy.Start("127.0.0.1:1", -time.Millisecond)
	require.ErrorContains(t, err, "negative")
}

// TestCloseEndsEveryConnection: connections whose server side has ended,
// their end still on its way to the client, are closed by Close too (they
// were forgotten, and their client side left open).
func TestCloseEndsEveryConnection(t *testing.T) {
	srv, err := redisserver.Start()
	require.NoError(t, err)
	t.Cleanup(srv.Close)
	p, err := delayproxy.Start(srv.Addr(), 200*time.Millisecond)
	require.NoError(t, err)
	var cs []net.Conn
	for i := 0; i < 8; i++ {
		c, err := net.Dial("tcp", p.Addr())
		require.NoError(t, err)
		t.Cleanup(func() { _ = c.Close() })
		_, err = c.Write([]byte("QUIT\r\n"))
		require.NoError(t, err)
		cs = append(cs, c)
	}
	// The servers end their sides 100 ms from now (the QUITs' way there);
	// the proxy closes before those ends reach the clients.
	time.Sleep(150 * time.Millisecond)
	closed := make(chan struct{})
	go func() { p.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return")
	}
	for i, c := range cs {
		// Whatever came before, the client's connection ends: no timeout.
		require.NoError(t, c.SetReadDeadline(time.Now().Add(2*time.Second)))
		_, err = io.ReadAll(c)
		var ne net.Error
		require.False(t, errors.As(err, &ne) && ne.Timeout(), "connection %d must be closed, got %v", i, err)
	}
}
