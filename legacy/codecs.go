package legacy

import "github.com/lockbridge/lockbridge/internal/protocol/legacyproto"

// KeyCodec is how a Java service turns the lock name into the Redis key.
// Two Java services that lock the "same" name through different
// serializers lock different Redis keys; the Go side must use the codec of
// the service it shares the lock with.
//
// Encode returns the Redis key of a name (an error wrapping
// lockbridge.ErrInvalid when the codec cannot encode it); String returns
// the codec's id ("raw", "jdk-string"). The zero KeyCodec is KeyRaw.
type KeyCodec = legacyproto.KeyCodec

// The key codecs.
const (
	// KeyRaw uses the name's bytes as they are: StringRedisTemplate and
	// StringRedisSerializer (UTF-8), Jedis, and getBytes() on JDK 18+ (or
	// on any JDK for ASCII names). For a JVM whose default charset is not
	// UTF-8, pass the name already encoded in that charset.
	KeyRaw = legacyproto.KeyRaw
	// KeyJavaString is a JDK-serialized java.lang.String, as Spring Boot's
	// default RedisTemplate writes keys: ac ed 00 05 74 <u16 length>
	// <modified UTF-8>, or ac ed 00 05 7c <u64 length> <modified UTF-8>
	// when the modified UTF-8 is longer than 65535 bytes. Modified UTF-8
	// writes NUL as c0 80 and characters beyond U+FFFF as two 3-byte
	// surrogates (CESU-8). The name must be valid UTF-8.
	KeyJavaString = legacyproto.KeyJavaString
)

// ValueCodec is how a Java service serializes the expiry timestamp it
// stores as the lock's value. Each codec writes exactly the bytes the Java
// side writes and decodes strictly: what Long.parseLong accepts in ASCII,
// at most 19 digits. A value that does not decode is a foreign lock.
//
// Encode returns the bytes the Java side writes for an expiry; Decode
// returns the expiry stored in a value, or a *ForeignValueError; String
// returns the codec's id ("decimal", "jdk-string", "jdk-long",
// "json-string", "json-number"). The zero ValueCodec is ValueDecimal.
type ValueCodec = legacyproto.ValueCodec

// The value codecs.
const (
	// ValueDecimal is ASCII decimal, String.valueOf(long): StringRedisTemplate,
	// Jedis, jedis-lock, and raw RedisConnection calls with getBytes().
	// 1700000000001 is stored as "1700000000001".
	ValueDecimal = legacyproto.ValueDecimal
	// ValueJavaString is a JDK-serialized java.lang.String holding the
	// decimal (the default RedisTemplate with a String value):
	// ac ed 00 05 74 <u16 length> <ASCII digits>, 20 bytes for 13 digits.
	ValueJavaString = legacyproto.ValueJavaString
	// ValueJavaLong is a JDK-serialized java.lang.Long (the default
	// RedisTemplate with a Long value): a fixed 74-byte prefix, then the
	// value as a big-endian int64; 82 bytes.
	ValueJavaLong = legacyproto.ValueJavaLong
	// ValueJSONString is a JSON string holding the decimal, quotes
	// included (Jackson serializers on a String value): "\"1700000000001\"".
	ValueJSONString = legacyproto.ValueJSONString
	// ValueJSONNumber is a bare JSON number (Jackson serializers on a Long,
	// except Spring Data Redis 2.7.0–2.7.1's typed form): the same bytes as
	// ValueDecimal, decoded the same way.
	ValueJSONNumber = legacyproto.ValueJSONNumber
)

// ValueCodecs returns every value codec, in declaration order: what a tool
// that decodes an unknown value tries in turn.
func ValueCodecs() []ValueCodec { return legacyproto.ValueCodecs() }
