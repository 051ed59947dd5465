package rueidiscore

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNewCommand(t *testing.T) {
	for _, tc := range []struct {
		name  string
		args  []any
		parts []string
		key   int
	}{
		{"key first", []any{"SETNX", "k", "1"}, []string{"SETNX", "k", "1"}, 1},
		{"lower case", []any{"get", "k"}, []string{"get", "k"}, 1},
		{"script with keys", []any{"EVALSHA", "abc", "2", "a", "b", "x"}, []string{"EVALSHA", "abc", "2", "a", "b", "x"}, 3},
		{"script without keys", []any{"EVAL", "return 1", "0"}, []string{"EVAL", "return 1", "0"}, 0},
		{"keyless", []any{"CLIENT", "LIST"}, []string{"CLIENT", "LIST"}, 0},
		{"WAIT", []any{"WAIT", 1, int64(100)}, []string{"WAIT", "1", "100"}, 0},
		{"subcommand key", []any{"OBJECT", "ENCODING", "k"}, []string{"OBJECT", "ENCODING", "k"}, 2},
		{"numbers and bytes", []any{"SET", []byte("k\x00"), 1.5, true, uint8(7)},
			[]string{"SET", "k\x00", "1.5", "1", "7"}, 1},
		{"name only", []any{"PING"}, []string{"PING"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := NewCommand(tc.args)
			require.NoError(t, err)
			assert.Equal(t, tc.parts, c.Parts)
			assert.Equal(t, tc.key, c.Key)
		})
	}
}

func TestNewCommandRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []any
	}{
		{"nothing", nil},
		{"empty name", []any{""}},
		{"unknown type", []any{"SET", "k", struct{}{}}},
		{"subscribe", []any{"SSUBSCRIBE", "ch"}},
		{"unsubscribe", []any{"unsubscribe"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewCommand(tc.args)
			assert.Error(t, err)
		})
	}
}

func TestWordsCommand(t *testing.T) {
	words := []string{"EVALSHA", "abc", "1", "k", "tok"}
	c, err := WordsCommand(words)
	require.NoError(t, err)
	assert.Equal(t, words, c.Parts)
	assert.Equal(t, 3, c.Key)
	words[3] = "changed" // the command keeps a copy of its own
	assert.Equal(t, "k", c.Parts[3])
	c.free()
	assert.Nil(t, c.Parts)

	for _, bad := range [][]string{nil, {""}, {"subscribe", "ch"}} {
		_, err := WordsCommand(bad)
		assert.Error(t, err, "%q", bad)
	}
}
