package redisson

import "time"

// What the external tests (package redisson_test) use of the package's
// unexported names: Redisson's names on the wire, and the scripts.
var (
	ChannelName   = channelName
	LatchName     = latchName
	WaiterChannel = waiterChannel
	Scripts       = allScripts
	// WithUnlockLatch sets how long an unlock's latch lives (at least 1 s).
	WithUnlockLatch = withUnlockLatch
)

// The prefixes of the names, and the unlock message.
const (
	ChannelPrefix = channelPrefix
	QueuePrefix   = queuePrefix
	TimeoutPrefix = timeoutPrefix
	TokenPrefix   = tokenPrefix
	UnlockMessage = unlockMessage
)

// ClientID returns the Locker's client id, the first half of its fields.
func (l *Locker) ClientID() string { return l.clientID }

// Ahead returns the waiter ahead that e names, and its timeout.
func Ahead(e *NotObtainedError) (string, time.Time) { return e.ahead, e.aheadUntil }

// NotObtainedAhead returns a NotObtainedError on key naming the waiter ahead.
func NotObtainedAhead(key, ahead string) NotObtainedError {
	return NotObtainedError{Key: key, ahead: ahead}
}
