package locktest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
)

// Call is one named call of a table test.
type Call struct {
	Name string
	Do   func() error
}

// Nils are the nil and zero values of one lock package's types, behind the
// lockbridge interfaces (a nil *pkg.Locker stays a nil pointer inside).
type Nils struct {
	Locker, ZeroLocker lockbridge.Locker
	Lock, ZeroLock     lockbridge.Lock
}

// NilInputs checks that no nil or zero input panics: the lockbridge.Locker
// and lockbridge.Lock calls with a nil context (on l and on held, a lock l
// holds), on a nil and a zero Locker, and on a nil and a zero Lock, and
// extra (the package's own calls), each give an error wrapping
// lockbridge.ErrInvalid; Unlock of a nil Lock gives ErrNotHeld. held is
// still held after the bad calls, and is released.
func NilInputs(t *testing.T, l lockbridge.Locker, held lockbridge.Lock, n Nils, extra ...Call) {
	t.Helper()
	ctx := context.Background()
	var nilCtx context.Context
	calls := []Call{
		{"TryLock nil ctx", func() error { _, err := l.TryLock(nilCtx, "k", time.Second); return err }},
		{"Lock nil ctx", func() error { _, err := l.Lock(nilCtx, "k", time.Second); return err }},
		{"Refresh nil ctx", func() error { return held.Refresh(nilCtx, time.Second) }},
		{"Unlock nil ctx", func() error { return held.Unlock(nilCtx) }},
		{"nil Locker TryLock", func() error { _, err := n.Locker.TryLock(ctx, "k", time.Second); return err }},
		{"nil Locker Lock", func() error { _, err := n.Locker.Lock(ctx, "k", time.Second); return err }},
		{"zero Locker TryLock", func() error { _, err := n.ZeroLocker.TryLock(ctx, "k", time.Second); return err }},
		{"zero Locker Lock", func() error { _, err := n.ZeroLocker.Lock(ctx, "k", time.Second); return err }},
		{"nil Lock Refresh", func() error { return n.Lock.Refresh(ctx, time.Second) }},
		{"zero Lock Unlock", func() error { return n.ZeroLock.Unlock(ctx) }},
		{"zero Lock Refresh", func() error { return n.ZeroLock.Refresh(ctx, time.Second) }},
	}
	for _, c := range append(calls, extra...) {
		t.Run(c.Name, func(t *testing.T) {
			var err error
			require.NotPanics(t, func() { err = c.Do() })
			assert.ErrorIs(t, err, lockbridge.ErrInvalid)
		})
	}
	assert.ErrorIs(t, n.Lock.Unlock(ctx), lockbridge.ErrNotHeld)
	assert.NoError(t, held.Unlock(ctx), "the lock is still held after the bad calls")
}
