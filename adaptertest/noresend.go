package adaptertest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/internal/testing/faultproxy"
)

func noResend(t *testing.T, c driver.Client, p *faultproxy.Proxy) {
	ctx := ctx(t)
	_, err := c.Eval(ctx, incrScript, []string{"warm"}) // loaded: EVALSHA runs it
	require.NoError(t, err)
	count := func(key string) string {
		v, _, err := c.Get(ctx, key)
		require.NoError(t, err)
		return v
	}
	for _, tc := range []struct {
		name string
		then faultproxy.After
		call func(ctx context.Context) error
		cmd  faultproxy.Match
		key  string
	}{
		{"script, closed", faultproxy.Close, func(ctx context.Context) error {
			_, err := c.Eval(ctx, incrScript, []string{"n1"})
			return err
		}, faultproxy.Script(incrScript), "n1"},
		{"script, silent", faultproxy.Hang, func(ctx context.Context) error {
			_, err := c.Eval(ctx, incrScript, []string{"n2"})
			return err
		}, faultproxy.Script(incrScript), "n2"},
		{"SETNX, closed", faultproxy.Close, func(ctx context.Context) error {
			_, err := c.SetNX(ctx, "n3", "1")
			return err
		}, faultproxy.Command("SETNX"), "n3"},
		{"DEL, silent", faultproxy.Hang, func(ctx context.Context) error {
			_, err := c.Del(ctx, "n4")
			return err
		}, faultproxy.Command("DEL"), "n4"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "DEL, silent" {
				_, err := c.SetNX(ctx, "n4", "1")
				require.NoError(t, err)
			}
			sent := p.Count(tc.cmd)
			p.DropReply(tc.cmd, 1, tc.then)
			cctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
			err := tc.call(cctx)
			cancel()
			require.Error(t, err)
			assert.ErrorIs(t, err, lockbridge.ErrUnknownOutcome)
			time.Sleep(100 * time.Millisecond) // a resend would have gone out by now
			assert.Equal(t, 1, sent(), "sent once, never again")
			switch tc.key {
			case "n4":
				assert.Equal(t, "", count("n4"), "the DEL ran")
			default:
				assert.Equal(t, "1", count(tc.key), "it ran once")
			}
		})
	}
}
