package interop

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge/internal/testing/faultproxy"
)

// TestInteropTemplateScriptArgs pins the RedisTemplate.execute(script,
// keys, args...) pitfall: KEYS go through the key serializer and ARGV
// through the value serializer. On a StringRedisTemplate both are plain
// UTF-8; on a default RedisTemplate both are JDK-serialized, so a numeric
// argument ("60000") reaches Redis as AC ED 00 05 74 00 05 "60000", which
// PX refuses — and which lockbridge's scripts refuse as a bad argument.
func TestInteropTemplateScriptArgs(t *testing.T) {
	cases := []struct {
		template  string
		key, argv []string
		ok        bool
	}{
		{template: "string", key: []string{"orders"}, argv: []string{"v", "60000"}, ok: true},
		{template: "jdk", key: []string{"\xac\xed\x00\x05\x74\x00\x06orders"},
			argv: []string{"\xac\xed\x00\x05\x74\x00\x01v", "\xac\xed\x00\x05\x74\x00\x0560000"}},
	}
	for _, c := range cases {
		c := c
		t.Run(c.template, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			proxy := faultproxy.Start(t, e.srv.Addr())
			rec := &recorder{}
			proxy.Count(rec.match)
			j := startJavaAt(t, e, proxy.Addr(), javaFlags{"mode": "script", "name": lockName, "template": c.template,
				"client": "lettuce", "lease-ms": "60000"})
			line := j.next(time.Minute)
			t.Logf("%s template: %s", c.template, line)
			var sent []string
			rec.mu.Lock()
			for _, cmd := range rec.cmds {
				if cmd[0] == "EVALSHA" || cmd[0] == "EVAL" || cmd[0] == "evalsha" || cmd[0] == "eval" {
					sent = cmd
				}
			}
			rec.mu.Unlock()
			require.NotNil(t, sent, "the template sent the script")
			require.Len(t, sent, 3+len(c.key)+len(c.argv))
			assert.Equal(t, c.key, sent[3:3+len(c.key)], "KEYS: the key serializer")
			assert.Equal(t, c.argv, sent[3+len(c.key):], "ARGV: the value serializer")
			if c.ok {
				assert.Equal(t, "script-ok OK", line)
				pttl, err := e.raw.PTTL(context.Background(), "orders").Result()
				require.NoError(t, err)
				assert.Positive(t, pttl)
			} else {
				assert.Contains(t, line, "script-error")
				assert.Contains(t, line, "not an integer")
			}
		})
	}
}
