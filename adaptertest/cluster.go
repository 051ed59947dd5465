package adaptertest

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge/driver"
)

func clusterSlots(t *testing.T, c driver.Client) {
	ctx := ctx(t)
	// Keys spread over all three masters.
	for i := 0; i < 30; i++ {
		key := fmt.Sprintf("%s:%d", k(t, "spread"), i)
		ok, err := c.SetNX(ctx, key, fmt.Sprint(i))
		require.NoError(t, err)
		require.True(t, ok)
		v, _, err := c.Get(ctx, key)
		require.NoError(t, err)
		assert.Equal(t, fmt.Sprint(i), v)
	}
	tag := "{" + k(t, "tag") + "}"
	r, err := c.Eval(ctx, twoKeys, []string{tag + ":a", tag + ":b"}, "v")
	require.NoError(t, err, "a script whose keys share a slot runs")
	assert.Equal(t, int64(2), r)
	v, _, err := c.Get(ctx, tag+":b")
	require.NoError(t, err)
	assert.Equal(t, "v", v)

	_, err = c.Eval(ctx, twoKeys, []string{k(t, "slot-a"), k(t, "slot-b")}, "v")
	require.Error(t, err, "keys in different slots must be refused")
	assert.True(t, driver.HasPrefix(err, "CROSSSLOT"), "got %v", err)
}
