package awake

import (
	"encoding/binary"
	"fmt"
	"os"
)

// qosDevice is the kernel's CPU latency request device: a request holds
// while the file stays open.
const qosDevice = "/dev/cpu_dma_latency"

// Hold asks for a CPU wake-up latency of 0 µs until release is called (or the
// process ends). It needs write access to /dev/cpu_dma_latency (root); when
// it has none, or the kernel has no such device, it returns an error saying
// so and changes nothing.
func Hold() (release func(), err error) {
	f, err := os.OpenFile(qosDevice, os.O_WRONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("awake: %w", err)
	}
	var b [4]byte
	binary.NativeEndian.PutUint32(b[:], 0) // µs; the device takes a binary s32
	if _, err := f.Write(b[:]); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("awake: writing %s: %w", qosDevice, err)
	}
	return func() { _ = f.Close() }, nil
}
