package redisson

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
