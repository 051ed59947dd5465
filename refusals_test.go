package lockbridge_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/lockbridge/lockbridge"
)

func TestNotObtainedErrorText(t *testing.T) {
	for _, tc := range []struct {
		e    lockbridge.NotObtainedError
		want string
	}{
		{lockbridge.NotObtainedError{Pkg: "redisson", Key: "k"},
			`redisson: lock "k" not obtained: held by another (its lease unknown)`},
		{lockbridge.NotObtainedError{Pkg: "modern", Key: "k", HolderTTL: 2 * time.Second},
			`modern: lock "k" not obtained: held by another for 2s more`},
		{lockbridge.NotObtainedError{Pkg: "modern", Key: "k", HolderTTL: -1},
			`modern: lock "k" not obtained: held by another with no expiry`},
		{lockbridge.NotObtainedError{Pkg: "redisson", Key: "k", Detail: `a queued waiter is ahead ("u:1")`},
			`redisson: lock "k" not obtained: a queued waiter is ahead ("u:1")`},
		{lockbridge.NotObtainedError{Pkg: "legacy", Key: "k", HolderTTL: time.Second, Detail: "held until x (5)"},
			`legacy: lock "k" not obtained: held by another for 1s more, held until x (5)`},
	} {
		assert.Equal(t, tc.want, tc.e.Error())
		assert.True(t, errors.Is(&tc.e, lockbridge.ErrNotObtained))
	}
}
