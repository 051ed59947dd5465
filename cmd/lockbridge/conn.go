package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/driver/goredis"
	"github.com/redis/go-redis/v9"
	"github.com/spf13/pflag"
)

// connFlags are the connection flags of every command that talks to Redis.
type connFlags struct {
	url, cluster, namespace string
	timeout                 time.Duration
	// handshakes follows the TLS handshakes of the client built, for
	// ping's message.
	handshakes *tlsWatch
}

// register adds the flags, shared by every command (demo and doctor read
// them their own way: see their --help).
func (c *connFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&c.url, "redis", "",
		"Redis URL: redis://[user:password@]host:port[/db], rediss:// for TLS (default $REDIS_URL; demo: the embedded Redis)")
	fs.StringVar(&c.namespace, "namespace", "",
		"migration namespace (default $LOCKBRIDGE_NAMESPACE; phase changes refuse without one)")
	fs.StringVar(&c.cluster, "cluster", "",
		"comma-separated host:port addresses of a Redis Cluster (user, password and TLS from --redis if given)")
	fs.DurationVar(&c.timeout, "timeout", 5*time.Second, "timeout for connecting and for each Redis call, however long")
}

// ns returns the namespace: the flag, $LOCKBRIDGE_NAMESPACE, or "default".
func (c *connFlags) ns(e *env) string {
	if v := c.nsGiven(e); v != "" {
		return v
	}
	return "default"
}

// nsGiven returns the namespace the user named, or "".
func (c *connFlags) nsGiven(e *env) string {
	if c.namespace != "" {
		return c.namespace
	}
	return e.getenv("LOCKBRIDGE_NAMESPACE")
}

// target returns the URL to use: the flag, else $REDIS_URL (not for the
// demo).
func (c *connFlags) target(e *env, demo bool) string {
	if c.url != "" || demo {
		return c.url
	}
	return e.getenv("REDIS_URL")
}

// quietLogger silences go-redis' own log lines on stderr: the commands
// report errors themselves, one line each.
type quietLogger struct{}

func (quietLogger) Printf(context.Context, string, ...any) {}

func init() { redis.SetLogger(quietLogger{}) }

// redact hides the password of a Redis URL for messages.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}

// client builds the go-redis client for the flags without connecting.
func (c *connFlags) client(e *env, demo bool) (redis.UniversalClient, string, error) {
	if c.timeout <= 0 {
		return nil, "", usageErrorf("--timeout %v: want a positive duration", c.timeout)
	}
	c.handshakes = &tlsWatch{}
	opts, err := c.urlOptions(c.target(e, demo))
	if err != nil {
		return nil, "", err
	}
	if c.cluster != "" {
		return c.clusterClient(opts)
	}
	if opts == nil {
		return nil, "", usageErrorf("no Redis to talk to: give --redis URL, set REDIS_URL, or give --cluster addresses")
	}
	opts.MaxRetries = -1
	opts.DialTimeout = c.timeout
	opts.ContextTimeoutEnabled = true // --timeout bounds every reply too
	// go-redis would cap every reply at its default 3 s read timeout,
	// whatever the context allows: --timeout is the bound, however long.
	opts.ReadTimeout, opts.WriteTimeout = c.timeout, c.timeout
	opts.DialerRetries = 1 // one clear error at once, not five
	opts.Dialer = dialer(c.timeout, opts.TLSConfig, c.handshakes)
	return redis.NewClient(opts), "Redis " + opts.Addr, nil
}

// urlOptions parses the Redis URL raw; nil options when raw is empty.
func (c *connFlags) urlOptions(raw string) (*redis.Options, error) {
	if raw == "" {
		return nil, nil
	}
	if err := checkScheme(raw, c.url == ""); err != nil {
		return nil, err
	}
	o, err := redis.ParseURL(raw)
	if err != nil {
		var ue *url.Error // its message repeats the URL, password and all
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, usageErrorf("bad Redis URL %s: %v", redact(raw), strings.TrimPrefix(err.Error(), "redis: "))
	}
	if err := checkPort(o.Addr); err != nil {
		return nil, usageErrorf("bad Redis URL %s: %v", redact(raw), err)
	}
	return o, nil
}

// clusterClient is client's Redis Cluster client for --cluster, with the
// user, password and TLS of the Redis URL's options when there is one.
func (c *connFlags) clusterClient(opts *redis.Options) (redis.UniversalClient, string, error) {
	var addrs []string
	for _, a := range strings.Split(c.cluster, ",") {
		a = strings.TrimSpace(a)
		if a == "" || !strings.Contains(a, ":") {
			return nil, "", usageErrorf("bad --cluster address %q: want host:port[,host:port…]", a)
		}
		if err := checkPort(a); err != nil {
			return nil, "", usageErrorf("bad --cluster address %q: %v", a, err)
		}
		addrs = append(addrs, a)
	}
	co := &redis.ClusterOptions{Addrs: addrs, DialTimeout: c.timeout, DialerRetries: 1, ContextTimeoutEnabled: true,
		ReadTimeout: c.timeout, WriteTimeout: c.timeout, // not go-redis' 3 s: --timeout, however long
		MaxRetries: -1, MaxRedirects: -1} // lockbridge never resends (goredis.New)
	if opts != nil {
		if opts.DB != 0 {
			return nil, "", usageErrorf("a Redis Cluster has only database 0: drop the /%d from --redis", opts.DB)
		}
		co.Username, co.Password = opts.Username, opts.Password
		if opts.TLSConfig != nil {
			// Each node's certificate is checked against that node's
			// own host, not the --redis URL's.
			co.TLSConfig = opts.TLSConfig.Clone()
			co.TLSConfig.ServerName = ""
		}
	}
	co.Dialer = dialer(c.timeout, co.TLSConfig, c.handshakes)
	return redis.NewClusterClient(co), "Redis Cluster " + strings.Join(addrs, ","), nil
}

// dial returns a client for the flags once Redis has answered a PING, and a
// function that closes it.
func (c *connFlags) dial(ctx context.Context, e *env) (driver.Client, func(), error) {
	cl, _, closeFn, err := c.dialAt(ctx, e)
	return cl, closeFn, err
}

// dialAt is dial that also returns which server it reached, for messages
// ("Redis 127.0.0.1:6379").
func (c *connFlags) dialAt(ctx context.Context, e *env) (driver.Client, string, func(), error) {
	uc, where, err := c.client(e, false)
	if err != nil {
		return nil, "", nil, err
	}
	if err := c.ping(ctx, uc, where); err != nil {
		_ = uc.Close()
		return nil, "", nil, err
	}
	return goredis.New(uc), where, func() { _ = uc.Close() }, nil
}

// ping checks that the server answers, and says what is wrong when it does
// not: unreachable, the TLS handshake, the credentials, the database, not a
// cluster.
func (c *connFlags) ping(ctx context.Context, uc redis.UniversalClient, where string) error {
	timeout := c.timeout
	pctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err := uc.Ping(pctx).Err()
	var te *tlsError
	if !errors.As(err, &te) && err != nil {
		// go-redis may give up waiting before its dial reports.
		te = c.handshakes.failure()
	}
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return ctx.Err()
	case te != nil:
		// Before the timeout's test: a handshake that got no answer is a
		// TLS problem first (a plain-text server waits for a line).
		return fmt.Errorf("%s: the TLS handshake failed: %s (the server may not speak TLS: redis:// for plain text, "+
			"rediss:// only for a TLS port)", where, te.why(timeout))
	case errors.Is(err, context.DeadlineExceeded) || pctx.Err() != nil || isTimeout(err):
		return fmt.Errorf("cannot reach %s: no answer within %v (a longer --timeout, or check the host and port)", where,
			timeout)
	}
	msg := oneLine(err.Error())
	code := replyCode(err)
	switch {
	case code == "NOAUTH":
		return fmt.Errorf("%s wants a password: %s (give user and password: redis://user:password@host:port)", where, msg)
	case code == "WRONGPASS" || strings.Contains(msg, "invalid password") ||
		strings.Contains(msg, "invalid username-password"):
		return fmt.Errorf("%s refused the credentials: %s (check user and password: redis://user:password@host:port)",
			where, msg)
	case strings.Contains(msg, "DB index is out of range") || strings.Contains(msg, "invalid DB index"):
		return fmt.Errorf("%s has no such database: %s (the /db of the URL must be below the server's 'databases', 16 "+
			"by default; a cluster has only 0)", where, msg)
	case code == "NOPERM":
		return fmt.Errorf("%s: the user may not run this: %s", where, msg)
	case strings.Contains(msg, "cluster support disabled"):
		return fmt.Errorf("%s is not a cluster: %s (for a single server use --redis redis://HOST:PORT, not --cluster)",
			strings.Replace(where, "Redis Cluster ", "Redis ", 1), msg)
	}
	return fmt.Errorf("cannot reach %s: %s", where, msg)
}

// replyCode is the first word of a Redis error reply ("NOAUTH",
// "WRONGPASS"), or "" for any other error.
func replyCode(err error) string {
	var re redis.Error
	if !errors.As(err, &re) {
		return ""
	}
	code, _, _ := strings.Cut(re.Error(), " ")
	return code
}

// checkPort refuses an address whose port is not a number from 1 to 65535:
// a usage error, not a server that cannot be reached.
func checkPort(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("port %q: want a number from 1 to 65535", port)
	}
	return nil
}

// tlsWatch records the TLS handshakes of a client's dials: one that failed,
// or one still waiting for the server when ping gave up.
type tlsWatch struct {
	mu      sync.Mutex
	pending int
	err     error
}

func (w *tlsWatch) start() {
	w.mu.Lock()
	w.pending++
	w.mu.Unlock()
}

func (w *tlsWatch) done(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.pending--
	if err != nil {
		w.err = err
	}
}

// failure is the handshake that failed, one still under way (as a
// timeout), or nil.
func (w *tlsWatch) failure() *tlsError {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case w.err != nil:
		return &tlsError{w.err}
	case w.pending > 0:
		return &tlsError{context.DeadlineExceeded}
	}
	return nil
}

// tlsError is a TLS handshake that failed, so that ping can say so.
type tlsError struct{ err error }

func (e *tlsError) Error() string { return "TLS handshake: " + e.err.Error() }
func (e *tlsError) Unwrap() error { return e.err }

// why is the handshake's failure in words.
func (e *tlsError) why(timeout time.Duration) string {
	if errors.Is(e.err, context.DeadlineExceeded) || isTimeout(e.err) {
		return fmt.Sprintf("no answer to it within %v", timeout)
	}
	return oneLine(e.err.Error())
}

// dialer connects over TCP and, with cfg, does the TLS handshake itself,
// bounded by timeout, so that a failed handshake is told apart from a
// server that does not answer (go-redis reports both as a dial error).
func dialer(timeout time.Duration, cfg *tls.Config, w *tlsWatch) func(ctx context.Context, network,
	addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		d := net.Dialer{Timeout: timeout, KeepAlive: 5 * time.Minute}
		conn, err := d.DialContext(ctx, network, addr)
		if err != nil || cfg == nil {
			return conn, err
		}
		c := cfg.Clone()
		if c.ServerName == "" {
			// A cluster's nodes: each checked against its own host.
			c.ServerName, _, _ = net.SplitHostPort(addr)
		}
		hctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		tc := tls.Client(conn, c)
		w.start()
		err = tc.HandshakeContext(hctx)
		w.done(err)
		if err != nil {
			_ = conn.Close()
			return nil, &tlsError{err}
		}
		return tc, nil
	}
}

// checkScheme refuses a URL without a scheme, with the one it most likely
// lacks: "127.0.0.1:6379" is redis://127.0.0.1:6379. fromEnv says it came
// from REDIS_URL.
func checkScheme(raw string, fromEnv bool) error {
	if strings.Contains(raw, "://") {
		return nil
	}
	shown := strings.TrimPrefix(redact("redis://"+raw), "redis://") // the password hidden
	src := "--redis " + shown
	if fromEnv {
		src = "REDIS_URL=" + shown
	}
	if raw == "" || strings.ContainsAny(raw, " \t") {
		return usageErrorf("bad Redis URL %s: want redis://[user:password@]host:port[/db] (rediss:// for TLS)", src)
	}
	return usageErrorf("bad Redis URL %s: no scheme; did you mean redis://%s (rediss://%s for TLS)?", src, shown, shown)
}

// isTimeout reports a network timeout (go-redis applies the context's
// deadline to the socket, so the deadline shows as an i/o timeout).
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// oneLine folds a message onto one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// callCtx returns a context for one Redis call.
func (c *connFlags) callCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, c.timeout)
}
