package scripttest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParse(t *testing.T) {
	h, err := Parse(`-- x.lua: a script
--
-- KEYS[1]  the key
-- ARGV[1]  a token
-- ARGV[2]  a lease, mentioning KEYS[1] in prose
--
-- Replies, the codes named as in Go:
--   Ours   =  1  done
--                a continuation, x = 2 not a code
--   Absent = -1  gone
--
-- Not = 3: after the block, not a code
return 1
-- ARGV[3]  below the header: not a declaration
`)
	require.NoError(t, err)
	assert.Equal(t, Header{Keys: 1, Argv: 2, Codes: map[string]int64{"Ours": 1, "Absent": -1}}, h)
}

func TestParseBad(t *testing.T) {
	for _, c := range []struct{ name, src string }{
		{"gap", "-- KEYS[1]  a\n-- KEYS[3]  c\n"},
		{"out of order", "-- ARGV[2]  b\n-- ARGV[1]  a\n"},
		{"twice", "-- ARGV[1]  a\n-- ARGV[1]  a\n"},
		{"code twice", "-- Replies:\n--   A = 1\n--   A = 2\n"},
		{"code too large", "-- Replies:\n--   A = 99999999999999999999\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse(c.src)
			assert.Error(t, err)
		})
	}
}
