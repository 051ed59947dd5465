package luafrag

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestScriptPrependsFragments(t *testing.T) {
	s := Script("x.lua", "return 1", "noop.lua")
	assert.True(t, strings.HasPrefix(s.Source(), "-- noop.lua"))
	assert.True(t, strings.HasSuffix(s.Source(), "\nreturn 1"))
	assert.Equal(t, "x.lua", s.Name())
	assert.Panics(t, func() { Script("y.lua", "", "missing.lua") })
}
