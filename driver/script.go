package driver

import (
	"crypto/sha1"
	"encoding/hex"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Script is a Lua script run with EVALSHA, falling back to EVAL when the
// server answers NOSCRIPT (after a restart or SCRIPT FLUSH). Its SHA1 is
// computed once, by NewScript.
type Script struct {
	name, src, hash string
	commands        []string
	// hashArg and srcArg are hash and src boxed once, for the command
	// words of every call (boxing a string allocates).
	hashArg, srcArg any
}

// NewScript returns the script with source src. name appears in errors; by
// convention the embedded file's name, e.g. "legacy/scripts/acquire.lua".
func NewScript(name, src string) *Script {
	sum := sha1.Sum([]byte(src))
	h := hex.EncodeToString(sum[:])
	return &Script{name: name, src: src, hash: h, commands: scriptCommands(src), hashArg: h, srcArg: src}
}

// numKeys are the key counts 0 to 9 as command words, boxed once.
var numKeys = [...]any{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"}

// EvalSHAArgs returns the words of the command that runs s on keys with
// args: EVALSHA, the hash, the number of keys, the keys, then args, in one
// new slice. The constant words are boxed once per script, so the slice is
// the only allocation besides the keys'. An adapter turns it into EVAL
// (NOSCRIPT) with SetEval.
func (s *Script) EvalSHAArgs(keys []string, args []any) []any {
	a := make([]any, 3, 3+len(keys)+len(args))
	a[0], a[1] = "EVALSHA", s.hashArg
	if n := len(keys); n < len(numKeys) {
		a[2] = numKeys[n]
	} else {
		a[2] = strconv.Itoa(n)
	}
	for _, k := range keys {
		a = append(a, k)
	}
	return append(a, args...)
}

// SetEval turns words made by EvalSHAArgs into the EVAL of the source,
// for a server that answered NOSCRIPT.
func (s *Script) SetEval(words []any) {
	words[0], words[1] = "EVAL", s.srcArg
}

var callRE = regexp.MustCompile(`redis\.p?call\(\s*['"]([A-Za-z]+)['"]`)

// scriptCommands lists the commands src names literally in redis.call or
// redis.pcall, upper-cased, sorted, once each.
func scriptCommands(src string) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range callRE.FindAllStringSubmatch(src, -1) {
		c := strings.ToUpper(m[1])
		if !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	sort.Strings(out)
	return out
}

// Commands returns the commands the script runs by name (redis.call with a
// literal command), sorted: what an ACL user needs besides EVALSHA and EVAL.
// A command a script takes from its arguments (the release notice's PUBLISH
// or SPUBLISH) is not listed.
func (s *Script) Commands() []string { return append([]string(nil), s.commands...) }

// Name returns the name given to NewScript.
func (s *Script) Name() string { return s.name }

// Source returns the Lua source.
func (s *Script) Source() string { return s.src }

// Hash returns the lower-case hex SHA1 of the source, as EVALSHA wants it.
func (s *Script) Hash() string { return s.hash }

// String returns the script's name.
func (s *Script) String() string { return strings.TrimSpace(s.name) }
