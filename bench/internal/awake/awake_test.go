package awake

import (
	"encoding/binary"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestHold: held, the kernel's CPU latency target reads 0 µs; without
// write access to the device, Hold says which file it could not open.
func TestHold(t *testing.T) {
	release, err := Hold()
	if err != nil {
		require.ErrorContains(t, err, qosDevice)
		return
	}
	defer release()
	f, err := os.Open(qosDevice)
	require.NoError(t, err)
	defer f.Close()
	var b [4]byte
	_, err = f.Read(b[:])
	require.NoError(t, err)
	require.Equal(t, uint32(0), binary.NativeEndian.Uint32(b[:]))
}
