package driver

import (
	"crypto/sha1"
	"encoding/hex"
	"strings"
)

// Script is a Lua script run with EVALSHA, falling back to EVAL when the
// server answers NOSCRIPT (after a restart or SCRIPT FLUSH). Its SHA1 is
// computed once, by NewScript.
type Script struct {
	name, src, hash string
}

// NewScript returns the script with source src. name appears in errors; by
// convention the embedded file's name, e.g. "legacy/acquire.lua".
func NewScript(name, src string) *Script {
	sum := sha1.Sum([]byte(src))
	return &Script{name: name, src: src, hash: hex.EncodeToString(sum[:])}
}

// Name returns the name given to NewScript.
func (s *Script) Name() string { return s.name }

// Source returns the Lua source.
func (s *Script) Source() string { return s.src }

// Hash returns the lower-case hex SHA1 of the source, as EVALSHA wants it.
func (s *Script) Hash() string { return s.hash }

// String returns the script's name.
func (s *Script) String() string { return strings.TrimSpace(s.name) }
