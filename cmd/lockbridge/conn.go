package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
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
}

// register adds the flags, shared by every command (demo and doctor read
// them their own way: see their --help).
func (c *connFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&c.url, "redis", "", "Redis URL: redis://[user:password@]host:port[/db], rediss:// for TLS (default $REDIS_URL; demo: the embedded Redis)")
	fs.StringVar(&c.namespace, "namespace", "", "migration namespace (default $LOCKBRIDGE_NAMESPACE; phase changes refuse without one)")
	fs.StringVar(&c.cluster, "cluster", "", "comma-separated host:port addresses of a Redis Cluster (user, password and TLS from --redis if given)")
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
	raw := c.target(e, demo)
	var opts *redis.Options
	if raw != "" {
		if err := checkScheme(raw, c.url == ""); err != nil {
			return nil, "", err
		}
		o, err := redis.ParseURL(raw)
		if err != nil {
			var ue *url.Error // its message repeats the URL, password and all
			if errors.As(err, &ue) {
				err = ue.Err
			}
			return nil, "", usageErrorf("bad Redis URL %s: %v", redact(raw), strings.TrimPrefix(err.Error(), "redis: "))
		}
		opts = o
	}
	if c.cluster != "" {
		var addrs []string
		for _, a := range strings.Split(c.cluster, ",") {
			a = strings.TrimSpace(a)
			if a == "" || !strings.Contains(a, ":") {
				return nil, "", usageErrorf("bad --cluster address %q: want host:port[,host:port…]", a)
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
		return redis.NewClusterClient(co), "Redis Cluster " + strings.Join(addrs, ","), nil
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
	return redis.NewClient(opts), "Redis " + opts.Addr, nil
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
	if err := ping(ctx, uc, c.timeout, where); err != nil {
		_ = uc.Close()
		return nil, "", nil, err
	}
	return goredis.New(uc), where, func() { _ = uc.Close() }, nil
}

func ping(ctx context.Context, uc redis.UniversalClient, timeout time.Duration, where string) error {
	pctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err := uc.Ping(pctx).Err()
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.Is(err, context.DeadlineExceeded) || pctx.Err() != nil || isTimeout(err):
		return fmt.Errorf("cannot reach %s: no answer within %v (a longer --timeout, or check the host and port)", where, timeout)
	}
	msg := oneLine(err.Error())
	switch {
	case driver.HasPrefix(err, "WRONGPASS") || driver.HasPrefix(err, "NOAUTH") || strings.Contains(msg, "invalid password") ||
		strings.Contains(msg, "invalid username-password"):
		return fmt.Errorf("%s refused the credentials: %s (check user and password: redis://user:password@host:port)", where, msg)
	case strings.Contains(msg, "DB index is out of range") || strings.Contains(msg, "invalid DB index"):
		return fmt.Errorf("%s has no such database: %s (the /db of the URL must be below the server's 'databases', 16 by default; a cluster has only 0)", where, msg)
	case driver.HasPrefix(err, "NOPERM"):
		return fmt.Errorf("%s: the user may not run this: %s", where, msg)
	}
	return fmt.Errorf("cannot reach %s: %s", where, msg)
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
