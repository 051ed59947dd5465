package migrate

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
)

func TestPhaseNamesRoundTrip(t *testing.T) {
	for p := PhaseLegacy; p <= PhaseModern; p++ {
		q, err := ParsePhase(p.String())
		require.NoError(t, err)
		assert.Equal(t, p, q)
		b, err := p.MarshalText()
		require.NoError(t, err)
		var r Phase
		require.NoError(t, r.UnmarshalText(b))
		assert.Equal(t, p, r)
	}
	for in, want := range map[string]Phase{"DualWrite": PhaseDualWrite, "dual_read": PhaseDualRead,
		" MODERN ": PhaseModern, "Legacy": PhaseLegacy} {
		got, err := ParsePhase(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
}

func TestParsePhaseRejectsUnknown(t *testing.T) {
	for _, in := range []string{"", "dual", "5", "legacyy", "phase(3)"} {
		_, err := ParsePhase(in)
		assert.ErrorIs(t, err, lockbridge.ErrInvalid, in)
	}
	_, err := Phase(0).MarshalText()
	assert.ErrorIs(t, err, lockbridge.ErrInvalid)
	assert.Equal(t, "phase(7)", Phase(7).String())
}

func TestNextPrev(t *testing.T) {
	p, ok := PhaseLegacy.Next()
	assert.True(t, ok)
	assert.Equal(t, PhaseDualWrite, p)
	_, ok = PhaseModern.Next()
	assert.False(t, ok)
	p, ok = PhaseModern.Prev()
	assert.True(t, ok)
	assert.Equal(t, PhaseDualRead, p)
	_, ok = PhaseLegacy.Prev()
	assert.False(t, ok)
}

// Which phases exclude each other: neighbours and DualWrite/Modern exclude each other;
// Legacy beside DualRead or Modern does not.
func TestCompatible(t *testing.T) {
	L, W, R, M := PhaseLegacy, PhaseDualWrite, PhaseDualRead, PhaseModern
	want := map[[2]Phase]bool{
		{L, L}: true, {L, W}: true, {L, R}: false, {L, M}: false,
		{W, W}: true, {W, R}: true, {W, M}: true,
		{R, R}: true, {R, M}: true,
		{M, M}: true,
	}
	for pair, ok := range want {
		assert.Equal(t, ok, Compatible(pair[0], pair[1]), "%v/%v", pair[0], pair[1])
		assert.Equal(t, ok, Compatible(pair[1], pair[0]), "%v/%v", pair[1], pair[0])
	}
	assert.False(t, Compatible(0, L))
}
