package interop

import (
	"context"
	"encoding/hex"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge/internal/protocol/legacyproto"
	"github.com/lockbridge/lockbridge/internal/testing/faultproxy"
	"github.com/lockbridge/lockbridge/legacy"
)

// recorder records the commands a client sends through a proxy.
type recorder struct {
	mu   sync.Mutex
	cmds [][]string
}

func (r *recorder) match(words []string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cmds = append(r.cmds, append([]string(nil), words...))
	return false
}

// lockCommands returns the recorded commands that touch lock state (not the
// connection handshake), as "NAME hex(arg1) hex(arg2) …" with the command
// name upper-cased, and drops them from the record.
func (r *recorder) lockCommands() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, c := range r.cmds {
		name := strings.ToUpper(c[0])
		switch name {
		case "HELLO", "CLIENT", "PING", "SELECT", "INFO", "COMMAND", "AUTH":
			continue
		}
		parts := []string{name}
		for _, a := range c[1:] {
			parts = append(parts, hex.EncodeToString([]byte(a)))
		}
		out = append(out, strings.Join(parts, " "))
	}
	r.cmds = nil
	return out
}

// names returns the command names of lockCommands' lines.
func names(cmds []string) []string {
	var out []string
	for _, c := range cmds {
		out = append(out, strings.Fields(c)[0])
	}
	return out
}

func hx(s string) string { return hex.EncodeToString([]byte(s)) }

// TestInteropJavaBytes pins what each Java variant writes and deletes, byte
// for byte, and checks it against the Go profile of that variant (whose
// encodings the golden vectors pin): the key, the value (decoded to the
// expiry the Java side computed), the commands of the acquire and of the
// release, and what the release leaves in Redis.
func TestInteropJavaBytes(t *testing.T) {
	const lease = 2000
	jdkOrders := "\xac\xed\x00\x05\x74\x00\x06orders"
	cases := []struct {
		java    javaSide
		profile []legacy.Option // nil: not a legacy lock
		key     string          // the key the lock is stored under
		acquire []string        // its commands, hex args; "V" stands for the value written
		release []string
		stays   bool // the release leaves the key behind
		value   *regexp.Regexp
		// The command names of the acquire and the release, for the
		// libraries that send scripts or computed arguments.
		acquireNames, releaseNames []string
	}{
		{java: javaCallbackLettuceString, profile: profileRaw, key: "orders",
			acquire: []string{"SETNX " + hx("orders") + " V"}, release: []string{"DEL " + hx("orders")}},
		{java: javaCallbackJedisString, profile: profileRaw, key: "orders",
			acquire: []string{"SETNX " + hx("orders") + " V"}, release: []string{"DEL " + hx("orders")}},
		// The RedisCallback writes raw bytes, but delete(key) on a default
		// RedisTemplate serializes the key: it deletes a key that does not
		// exist, and the lock stays until its expiry passes.
		{java: javaCallbackLettuceJDK, profile: profileRaw, key: "orders",
			acquire: []string{"SETNX " + hx("orders") + " V"}, release: []string{"DEL " + hx(jdkOrders)}, stays: true},
		{java: spring("spring-callback", "jedis", "jdk"), profile: profileRaw, key: "orders",
			acquire: []string{"SETNX " + hx("orders") + " V"}, release: []string{"DEL " + hx(jdkOrders)}, stays: true},
		// Template operations go through the serializers, and setIfAbsent
		// is SET NX since Spring Data Redis 3.4.
		{java: javaOpsJedisJDK, profile: profileJDK, key: jdkOrders,
			acquire: []string{"SET " + hx(jdkOrders) + " V " + hx("NX")}, release: []string{"DEL " + hx(jdkOrders)}},
		{java: spring("spring-ops", "lettuce", "jdk"), profile: profileJDK, key: jdkOrders,
			acquire: []string{"SET " + hx(jdkOrders) + " V " + hx("NX")}, release: []string{"DEL " + hx(jdkOrders)}},
		{java: javaOpsLettuceString, profile: profileRaw, key: "orders",
			acquire: []string{"SET " + hx("orders") + " V " + hx("NX")}, release: []string{"DEL " + hx("orders")}},
		{java: javaJedisLock, profile: profileRaw, key: "orders",
			acquire: []string{"SETNX " + hx("orders") + " V"}, release: []string{"DEL " + hx("orders")}},
		// RedisLockRegistry: its obtain script (EVALSHA, EVAL after
		// NOSCRIPT) sets the key to the registry's client id with PX the
		// lease; its release tries DELEX key IFEQ id (Redis 8.4) and, when
		// the server does not know DELEX, a script (GET equals → UNLINK).
		{java: javaIntegration, key: "locks:orders",
			value:        regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`),
			acquireNames: []string{"EVALSHA", "EVAL"}, releaseNames: []string{"DELEX", "EVALSHA", "EVAL"}},
		// ShedLock: SET key value PX <lockAtMostFor left> NX; an unlock
		// after lockAtLeastFor is a plain DEL.
		{java: javaShedLock, key: "job-lock:default:orders",
			acquireNames: []string{"SET"},
			release:      []string{"DEL " + hx("job-lock:default:orders")},
			value:        regexp.MustCompile(`^ADDED:\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z@[^:]+:.+$`)},
	}
	for _, c := range cases {
		c := c
		t.Run(c.java.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			e := newEnv(t)
			proxy := faultproxy.Start(t, e.srv.Addr())
			rec := &recorder{}
			proxy.Count(rec.match)
			flags := javaFlags{"mode": "once", "name": lockName, "lease-ms": strconv.Itoa(lease), "wait-ms": "10000"}
			for k, v := range c.java.flags {
				flags[k] = v
			}
			before := time.Now().UnixMilli()
			j := startJavaAt(t, e, proxy.Addr(), flags)
			at, err := strconv.ParseInt(j.expect("acquired", time.Minute), 10, 64)
			require.NoError(t, err)

			keys, err := e.raw.Keys(ctx, "*").Result()
			require.NoError(t, err)
			require.Equal(t, []string{c.key}, keys, "the one key the Java lock wrote")
			value, err := e.raw.Get(ctx, c.key).Result()
			require.NoError(t, err)
			acquire := rec.lockCommands()
			t.Logf("key %x value %x (%q); acquire: %v", c.key, value, value, acquire)

			if c.profile != nil {
				p, err := legacyproto.NewProfile(c.profile...)
				require.NoError(t, err)
				k, err := p.EncodeKey(lockName)
				require.NoError(t, err)
				assert.Equal(t, hx(k), hx(c.key), "the Go profile's key")
				v, err := p.DecodeValue(value)
				require.NoError(t, err)
				assert.Equal(t, hx(p.EncodeValue(v)), hx(value), "the Go profile writes the same value bytes")
				assert.GreaterOrEqual(t, v, before+lease+1, "now + lease + 1, now read after the test started")
				assert.LessOrEqual(t, v, at+lease+1, "now + lease + 1, now read before the Java side said acquired")
				pttl, err := e.raw.PTTL(ctx, c.key).Result()
				require.NoError(t, err)
				assert.Equal(t, time.Duration(-1), pttl, "no TTL on the key")
			}
			if c.value != nil {
				assert.Regexp(t, c.value, value)
				pttl, err := e.raw.PTTL(ctx, c.key).Result()
				require.NoError(t, err)
				assert.Positive(t, pttl)
				assert.LessOrEqual(t, pttl, time.Duration(lease)*time.Millisecond)
			}
			if c.acquire != nil {
				want := make([]string, len(c.acquire))
				for i, a := range c.acquire {
					want[i] = strings.Replace(a, " V", " "+hx(value), 1)
				}
				assert.Equal(t, want, acquire)
			}

			if c.acquireNames != nil {
				assert.Equal(t, c.acquireNames, names(acquire))
			}
			if c.java.name == javaShedLock.name {
				require.Len(t, acquire, 1)
				args := strings.Fields(acquire[0])
				require.Len(t, args, 6)
				assert.Equal(t, []string{hx(c.key), hx(value), hx("PX")}, args[1:4])
				px, err := hex.DecodeString(args[4])
				require.NoError(t, err)
				ms, err := strconv.Atoi(string(px))
				require.NoError(t, err)
				assert.LessOrEqual(t, ms, lease, "PX: what is left of lockAtMostFor")
				assert.Equal(t, hx("NX"), args[5])
			}

			j.send("release")
			j.expect("released", time.Minute)
			release := rec.lockCommands()
			t.Logf("release: %v", release)
			if c.release != nil {
				assert.Equal(t, c.release, release)
			}
			if c.releaseNames != nil {
				assert.Equal(t, c.releaseNames, names(release))
			}
			n, err := e.raw.Exists(ctx, c.key).Result()
			require.NoError(t, err)
			if c.stays {
				assert.Equal(t, int64(1), n, "the release missed: the lock stays until its expiry")
			} else {
				assert.Zero(t, n, "the release deleted the lock")
			}
		})
	}
}
