package resp

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"
)

// Conn is one RESP2 connection. It is not safe for concurrent use, except
// that Close may be called while another goroutine is in Receive.
type Conn struct {
	c       net.Conn
	r       *bufio.Reader
	w       bytes.Buffer
	timeout time.Duration
}

// Error is an error reply from the server.
type Error string

func (e Error) Error() string { return string(e) }

// Dial connects to addr within timeout; every Do must then complete within
// timeout too (0: no limit).
func Dial(addr string, timeout time.Duration) (*Conn, error) {
	d := net.Dialer{Timeout: timeout}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	return &Conn{c: c, r: bufio.NewReader(c), timeout: timeout}, nil
}

// Close closes the connection.
func (c *Conn) Close() error { return c.c.Close() }

// LocalAddr is the address the server sees this connection come from.
func (c *Conn) LocalAddr() string { return c.c.LocalAddr().String() }

// Do sends a command as a RESP array and reads its reply: simple and bulk
// strings as string, integers as int64, arrays as []any, nil replies as
// nil, and an error reply as an Error (returned as the error).
func (c *Conn) Do(args ...string) (any, error) {
	var deadline time.Time
	if c.timeout > 0 {
		deadline = time.Now().Add(c.timeout)
	}
	if err := c.c.SetDeadline(deadline); err != nil {
		return nil, err
	}
	c.w.Reset()
	fmt.Fprintf(&c.w, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&c.w, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := c.c.Write(c.w.Bytes()); err != nil {
		return nil, err
	}
	reply, err := c.read()
	if err != nil {
		return nil, err
	}
	if e, ok := reply.(Error); ok {
		return nil, e
	}
	return reply, nil
}

// Receive reads the next reply the server pushes (after MONITOR, say),
// without a deadline; error replies come back as Error values.
func (c *Conn) Receive() (any, error) {
	if err := c.c.SetReadDeadline(time.Time{}); err != nil {
		return nil, err
	}
	return c.read()
}

// read reads one reply. Error replies are Error values, not errors, so that
// they can be nested in arrays.
func (c *Conn) read() (any, error) {
	line, err := c.r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	if len(line) < 3 || !strings.HasSuffix(line, "\r\n") {
		return nil, fmt.Errorf("resp: malformed line %q", line)
	}
	kind, body := line[0], line[1:len(line)-2]
	switch kind {
	case '+':
		return body, nil
	case '-':
		return Error(body), nil
	case ':':
		return strconv.ParseInt(body, 10, 64)
	case '$':
		n, err := strconv.Atoi(body)
		if err != nil {
			return nil, fmt.Errorf("resp: malformed bulk length %q", body)
		}
		if n < 0 {
			return nil, nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(c.r, buf); err != nil {
			return nil, err
		}
		return string(buf[:n]), nil
	case '*':
		n, err := strconv.Atoi(body)
		if err != nil {
			return nil, fmt.Errorf("resp: malformed array length %q", body)
		}
		if n < 0 {
			return nil, nil
		}
		arr := make([]any, n)
		for i := range arr {
			if arr[i], err = c.read(); err != nil {
				return nil, err
			}
		}
		return arr, nil
	}
	return nil, fmt.Errorf("resp: unsupported reply type %q", kind)
}

// ParseInfo parses the "key:value" lines of INFO and CLUSTER INFO replies,
// skipping comments and blank lines.
func ParseInfo(text string) map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		if k, v, ok := strings.Cut(line, ":"); ok {
			m[k] = v
		}
	}
	return m
}
