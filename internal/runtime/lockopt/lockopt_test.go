package lockopt

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
)

type cfg struct {
	errs    Errs
	n       int
	backoff lockbridge.Backoff
	token   func() (string, error)
}

type option func(*cfg)

func TestErrsRecordsEveryInvalidOption(t *testing.T) {
	c := cfg{errs: For("pkg")}
	Apply(&c.errs, &c, []option{func(c *cfg) { c.n++ }, nil, func(c *cfg) { c.n++ }})
	assert.Equal(t, 2, c.n, "the valid options ran")
	c.errs.Backoff(&c.backoff, nil)
	c.errs.TokenFunc(&c.token, nil)
	c.errs.Keep(errors.New("other: kept as is"))
	err := c.errs.Err()
	require.ErrorIs(t, err, lockbridge.ErrInvalid)
	assert.Contains(t, err.Error(), "pkg: lockbridge: invalid argument: nil option")
	assert.Contains(t, err.Error(), "nil token func")
	assert.Contains(t, err.Error(), "\nother: kept as is")
	assert.Nil(t, c.backoff)
	assert.Nil(t, c.token)

	ok := cfg{errs: For("pkg")}
	b := lockbridge.ExponentialBackoff(time.Millisecond, time.Second)
	ok.errs.Backoff(&ok.backoff, b)
	ok.errs.TokenFunc(&ok.token, func() (string, error) { return "t", nil })
	assert.NoError(t, ok.errs.Err())
	assert.NotNil(t, ok.backoff)
}

func TestZero(t *testing.T) {
	assert.ErrorIs(t, Zero("pkg"), lockbridge.ErrInvalid)
}
