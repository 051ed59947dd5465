package adapter

import (
	"errors"
	"strings"

	"github.com/lockbridge/lockbridge/driver"
)

// NotSent marks an error of Conn.Do that happened before any byte of the
// command could reach the server — a failed dial, a closed client, a pool
// timeout, a refused client — so that driver.the Client of Wrap reports it as it is rather
// than as an unknown outcome. An adapter must use it only when it is sure.
func NotSent(err error) error {
	if err == nil {
		return nil
	}
	return notSentError{err}
}

type notSentError struct{ err error }

func (e notSentError) Error() string { return e.err.Error() }
func (e notSentError) Unwrap() error { return e.err }

// mayHaveRun reports whether err, the error of Conn.Do for command name,
// leaves it unknown whether a command that can change state ran: no reply
// came, and nothing says the command was not sent.
func mayHaveRun(name string, err error) bool {
	var re driver.ReplyError
	if errors.As(err, &re) {
		return false // the server answered
	}
	var ns notSentError
	if errors.As(err, &ns) {
		return false
	}
	return !readOnly[strings.ToUpper(name)]
}

// readOnly are the commands that change nothing a lock depends on: a lost
// reply to one of them leaves nothing unknown. Any command not here counts
// as one that may change state, scripts included.
var readOnly = map[string]bool{
	"GET": true, "MGET": true, "STRLEN": true, "EXISTS": true, "TYPE": true,
	"TTL": true, "PTTL": true, "EXPIRETIME": true, "PEXPIRETIME": true,
	"HGET": true, "HMGET": true, "HGETALL": true, "HLEN": true, "HEXISTS": true, "HKEYS": true, "HVALS": true,
	"HSCAN":    true,
	"SMEMBERS": true, "SISMEMBER": true, "SCARD": true, "SSCAN": true,
	"ZRANGE": true, "ZRANGEBYSCORE": true, "ZSCORE": true, "ZCARD": true, "ZCOUNT": true, "ZSCAN": true,
	"LRANGE": true, "LLEN": true, "LINDEX": true,
	"SCAN": true, "KEYS": true, "DBSIZE": true,
	"PING": true, "ECHO": true, "TIME": true, "INFO": true,
	"EVALSHA_RO": true, "EVAL_RO": true, "FCALL_RO": true,
}
