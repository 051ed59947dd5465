package locktest

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
)

// GaveUp checks the error of a lock call that gave up when its context
// ended (ctxErr: context.DeadlineExceeded or context.Canceled): it wraps
// ctxErr, and exactly one of lockbridge.ErrNotObtained (no attempt was on
// its way, or its undo released it) and lockbridge.ErrUnknownOutcome (the
// context ended with an attempt on its way, which may still run). Which one
// depends on where the deadline fell, so a test of giving up accepts both.
func GaveUp(t testing.TB, err, ctxErr error) {
	t.Helper()
	require.ErrorIs(t, err, ctxErr)
	notObtained, unknown := errors.Is(err, lockbridge.ErrNotObtained), errors.Is(err, lockbridge.ErrUnknownOutcome)
	require.True(t, notObtained != unknown, "exactly one of not obtained (%v) and unknown outcome (%v): %v",
		notObtained, unknown, err)
}
