package locktest

import (
	"sync"
	"time"
)

// OffsetClock is the system clock plus an offset that a test moves: set it
// back before an acquire and to zero after, and the holder has been
// "paused" for that long. The zero value reads the system clock.
type OffsetClock struct {
	mu  sync.Mutex
	off time.Duration
}

// Set moves the offset to d.
func (c *OffsetClock) Set(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.off = d
}

// Now is the system clock plus the offset.
func (c *OffsetClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.off)
}

// PinClock reads a pinned time, or the system clock when none is pinned.
// The zero value is unpinned.
type PinClock struct {
	mu  sync.Mutex
	pin time.Time
}

// Pin pins the clock at t; the zero time unpins it.
func (c *PinClock) Pin(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pin = t
}

// Now is the pinned time, or the system clock's.
func (c *PinClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pin.IsZero() {
		return time.Now()
	}
	return c.pin
}

// At is a clock stopped at t.
func At(t time.Time) func() time.Time { return func() time.Time { return t } }

// Skewed is the system clock moved by d.
func Skewed(d time.Duration) func() time.Time {
	return func() time.Time { return time.Now().Add(d) }
}
