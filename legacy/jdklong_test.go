package legacy_test

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/legacy"
)

// legacy_decode.lua says values beyond 2^53 are "rounded to the nearest
// double"; the jdk-long branch accumulates byte by byte and rounds at each
// step, so it is not (decimal codecs are: one strtod).
func TestJavaLongNearestDouble(t *testing.T) {
	script := testScript(t, "decode.lua", "legacy_decode.lua")
	tg := locktest.Single(t)[0]
	ctx := locktest.Ctx(t)
	for _, v := range []int64{3673093643094722933, -3075684941658651996, 1<<53 + 1} {
		r, err := tg.Client.Eval(ctx, script, []string{"unused"}, legacy.ValueJavaLong.Encode(v), "jdk-long")
		require.NoError(t, err)
		got := r.([]any)
		nearest := strconv.FormatFloat(float64(v), 'f', 0, 64)
		assert.Equal(t, nearest, got[0], "jdk-long %d", v)
	}
}
