package driver_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/lockbridge/lockbridge/driver"
	"github.com/stretchr/testify/assert"
)

// The replies are the texts Redis 7 sends; the classes must see them
// through any wrapping.
func TestReplyClasses(t *testing.T) {
	for _, tc := range []struct {
		reply string
		want  *driver.Class
	}{
		{"NOPERM this user has no permissions to run the 'evalsha' command", driver.ErrNoPerm},
		{"ERR The user executing the script can't run this command or subcommand script: 316f, on @user_script:1.",
			driver.ErrNoPerm},
		{"WRONGTYPE Operation against a key holding the wrong kind of value", driver.ErrWrongType},
		{"LOADING Redis is loading the dataset in memory", driver.ErrLoading},
		{"READONLY You can't write against a read only replica.", driver.ErrReadOnly},
		{"MOVED 3999 127.0.0.1:6381", driver.ErrMoved},
		{"ASK 3999 127.0.0.1:6381", driver.ErrMoved},
		{"CLUSTERDOWN The cluster is down", driver.ErrClusterDown},
		{"TRYAGAIN Multiple keys request during rehashing of slot", driver.ErrClusterDown},
		{"MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.", driver.ErrClusterDown},
		{"OOM command not allowed when used memory > 'maxmemory'.", driver.ErrOOM},
		{"NOSCRIPT No matching script. Please use EVAL.", driver.ErrNoScripting},
		{"ERR unknown command 'EVAL', with args beginning with: ", driver.ErrNoScripting},
		{"BUSY Redis is busy running a script.", driver.ErrBusy},
		{"ERR wrong number of arguments for 'get' command", nil},
		{"MOVEDX not a code", nil},
	} {
		t.Run(tc.reply, func(t *testing.T) {
			err := fmt.Errorf("legacy: acquire %q: %w", "k", fmt.Errorf("driver: GET: %w", driver.ReplyError(tc.reply)))
			assert.Equal(t, tc.want, driver.ClassOf(err))
			if tc.want != nil {
				assert.ErrorIs(t, err, tc.want)
			}
			assert.False(t, errors.Is(err, driver.ErrBusy) && tc.want != driver.ErrBusy)
		})
	}
	assert.Nil(t, driver.ClassOf(errors.New("EOF")))
	assert.Nil(t, driver.ClassOf(nil))
}

func TestScriptCommands(t *testing.T) {
	s := driver.NewScript("x.lua", "local a = redis.call('GET', KEYS[1])\n"+
		"if a then redis.call( \"del\", KEYS[1]) end\nredis.pcall('TIME') redis.call('GET', KEYS[2])\n"+
		"redis.call(ARGV[1], KEYS[3], 'x')")
	assert.Equal(t, []string{"DEL", "GET", "TIME"}, s.Commands())
}
