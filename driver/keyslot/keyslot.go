package keyslot

import "strings"

// Slots is the number of hash slots in a Redis Cluster.
const Slots = 16384

// Tag returns the part of key that Redis Cluster hashes: the content of the
// first {…} pair when it is non-empty, otherwise the whole key. ok reports
// whether key has such a hash tag.
func Tag(key string) (tag string, ok bool) {
	for i := 0; i < len(key); i++ {
		if key[i] != '{' {
			continue
		}
		for j := i + 1; j < len(key); j++ {
			if key[j] == '}' {
				if j == i+1 {
					return key, false // "{}" is no tag: the whole key is hashed
				}
				return key[i+1 : j], true
			}
		}
		return key, false // an opening brace without a closing one
	}
	return key, false
}

// Of returns the hash slot of key.
func Of(key string) int {
	tag, _ := Tag(key)
	return int(crc16(tag) % Slots)
}

// crc16 is CRC-16/XMODEM (polynomial 0x1021, initial value 0).
func crc16(s string) uint16 {
	var crc uint16
	for i := 0; i < len(s); i++ {
		crc ^= uint16(s[i]) << 8
		for b := 0; b < 8; b++ {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}

// Companion returns the name of a key that lives in the same hash slot as
// key, so that one script may touch both in Redis Cluster: key+suffix when
// key has a hash tag, "{"+key+"}"+suffix otherwise. ok is false when neither
// form hashes to key's slot (a key holding a stray '}', for instance).
func Companion(key, suffix string) (name string, ok bool) {
	if _, tagged := Tag(key); tagged {
		// key's tag, its first {…} pair, is the tag of key+suffix too.
		return key + suffix, true
	}
	name = "{" + key + "}" + suffix
	if key != "" && strings.IndexByte(key, '}') < 0 {
		// The first '}' after the leading '{' is the one added: the tag
		// is key itself, which hashes whole as untagged.
		return name, true
	}
	return name, Of(name) == Of(key)
}
