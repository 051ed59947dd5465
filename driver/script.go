package driver

import (
	"crypto/sha1"
	"encoding/hex"
	"regexp"
	"sort"
	"strings"
)

// Script is a Lua script run with EVALSHA, falling back to EVAL when the
// server answers NOSCRIPT (after a restart or SCRIPT FLUSH). Its SHA1 is
// computed once, by NewScript.
type Script struct {
	name, src, hash string
	commands        []string
}

// NewScript returns the script with source src. name appears in errors; by
// convention the embedded file's name, e.g. "legacy/scripts/acquire.lua".
func NewScript(name, src string) *Script {
	sum := sha1.Sum([]byte(src))
	return &Script{name: name, src: src, hash: hex.EncodeToString(sum[:]), commands: scriptCommands(src)}
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
