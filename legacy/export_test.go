package legacy

import "github.com/lockbridge/lockbridge/internal/protocol/legacyproto"

// The scripts of legacyproto.ModeAtomic, for the tests of their arguments.
var (
	AcquireScript = acquireScript
	ReleaseScript = releaseScript
	RefreshScript = refreshScript
)

// MaxForeignKept is how many bytes of a foreign value TryLock and Lock keep.
const MaxForeignKept = legacyproto.MaxForeignKept

// RedisKeyOf returns lk's Redis key, as the key codec encoded the name.
func RedisKeyOf(lk *Lock) string { return lk.ekey }

// ExpiryOf returns the expiry W lk wrote, in the profile's unit.
func ExpiryOf(lk *Lock) int64 { return lk.expiry() }

// ParseKeyCodec and ParseValueCodec return the codec whose id (String) is id.
var (
	ParseKeyCodec   = legacyproto.ParseKeyCodec
	ParseValueCodec = legacyproto.ParseValueCodec
)
