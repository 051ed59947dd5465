package adaptertest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge/driver"
)

func errorClasses(t *testing.T, c driver.Client) {
	ctx := ctx(t)
	_, err := c.Do(ctx, "RPUSH", "list", "a")
	require.NoError(t, err)
	_, _, err = c.Get(ctx, "list")
	assert.ErrorIs(t, err, driver.ErrWrongType)
	assert.ErrorIs(t, err, driver.ErrWrongType)
	_, err = c.Eval(ctx, getScript, []string{"list"})
	assert.ErrorIs(t, err, driver.ErrWrongType)
	assert.NotErrorIs(t, err, driver.ErrNoPerm)

	_, err = c.Do(ctx, "ACL", "SETUSER", "default", "-publish")
	require.NoError(t, err)
	_, err = c.Eval(ctx, deleteThenPublish, []string{"k"})
	require.ErrorIs(t, err, driver.ErrNoPerm, "a command denied inside a script")
	assert.Contains(t, err.Error(), "adaptertest/delpub.lua")
	assert.Contains(t, err.Error(), "DEL, PUBLISH", "the commands the script needs are named")
	_, err = c.Do(ctx, "PUBLISH", "ch", "x")
	assert.ErrorIs(t, err, driver.ErrNoPerm, "a command denied directly")
	_, err = c.Do(ctx, "ACL", "SETUSER", "default", "+@all")
	require.NoError(t, err)

	_, err = c.Do(ctx, "CONFIG", "SET", "maxmemory", "1")
	require.NoError(t, err)
	_, err = c.SetNX(ctx, "k", "1")
	assert.ErrorIs(t, err, driver.ErrOOM)
	_, err = c.Eval(ctx, twoKeys, []string{"a", "b"}, "1")
	assert.ErrorIs(t, err, driver.ErrOOM)
	_, err = c.Do(ctx, "CONFIG", "SET", "maxmemory", "0")
	require.NoError(t, err)
}

var incrScript = driver.NewScript("adaptertest/incr.lua",
	"-- INCRs KEYS[1], returns the count\nreturn redis.call('INCR', KEYS[1])")

// noResend checks that a command whose reply is lost — the connection
// closes, or stays silent until a deadline — is sent once, ran once, and
// comes back as an error wrapping lockbridge.ErrUnknownOutcome: the adapter
// never sends it again.
