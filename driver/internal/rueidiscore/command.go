package rueidiscore

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// Command is one command as the clients' builders take it: Parts are its
// words, Key the index in Parts of the key that routes it to a cluster node
// (0 when it has none: any node serves it).
type Command struct {
	Parts []string
	Key   int

	buf *[]string // Parts' array, from partsPool; nil when not pooled
}

// partsPool holds the arrays of Commands sent and done with: the clients'
// builders copy the words into a command of their own, so the array is free
// once the command is built and sent.
var partsPool = sync.Pool{New: func() any { return new([]string) }}

// free gives the command's array back for another command. cmd must not be
// used after.
func (cmd *Command) free() {
	if cmd.buf == nil {
		return
	}
	clear(*cmd.buf) // hold no strings of this command
	partsPool.Put(cmd.buf)
	cmd.buf, cmd.Parts = nil, nil
}

// errSubscribe refuses (S|P)SUBSCRIBE and their opposites on a shared
// connection: subscriptions go through Subscribe, on a dedicated one.
var errSubscribe = errors.New("subscribe commands go through Subscribe, not Do")

// NewCommand converts the driver's arguments into a Command. Arguments are
// strings, byte slices, integers, floats or booleans (sent as 1 or 0).
func NewCommand(args []any) (Command, error) {
	if len(args) == 0 {
		return Command{}, errors.New("empty command")
	}
	cmd := Command{buf: partsPool.Get().(*[]string)}
	parts := grow(cmd.buf, len(args))
	cmd.Parts = parts
	for i, a := range args {
		s, err := arg(a)
		if err != nil {
			cmd.free()
			return Command{}, fmt.Errorf("argument %d: %w", i, err)
		}
		parts[i] = s
	}
	return cmd.finish()
}

// WordsCommand is NewCommand for words already strings. The Command does
// not keep words.
func WordsCommand(words []string) (Command, error) {
	if len(words) == 0 {
		return Command{}, errors.New("empty command")
	}
	cmd := Command{buf: partsPool.Get().(*[]string)}
	cmd.Parts = grow(cmd.buf, len(words))
	copy(cmd.Parts, words)
	return cmd.finish()
}

// grow makes *buf n words long and returns it.
func grow(buf *[]string, n int) []string {
	if cap(*buf) < n {
		*buf = make([]string, n)
	}
	*buf = (*buf)[:n]
	return *buf
}

// finish checks the command's name and finds its key.
func (cmd Command) finish() (Command, error) {
	name := strings.ToUpper(cmd.Parts[0])
	if name == "" {
		cmd.free()
		return Command{}, errors.New("empty command name")
	}
	if strings.HasSuffix(name, "SUBSCRIBE") {
		cmd.free()
		return Command{}, errSubscribe
	}
	cmd.Key = keyIndex(name, cmd.Parts)
	return cmd, nil
}

func arg(a any) (string, error) {
	switch v := a.(type) {
	case string:
		return v, nil
	case []byte:
		return string(v), nil
	case int:
		return strconv.Itoa(v), nil
	case int64:
		return strconv.FormatInt(v, 10), nil
	case int32:
		return strconv.FormatInt(int64(v), 10), nil
	case int16:
		return strconv.FormatInt(int64(v), 10), nil
	case int8:
		return strconv.FormatInt(int64(v), 10), nil
	case uint:
		return strconv.FormatUint(uint64(v), 10), nil
	case uint64:
		return strconv.FormatUint(v, 10), nil
	case uint32:
		return strconv.FormatUint(uint64(v), 10), nil
	case uint16:
		return strconv.FormatUint(uint64(v), 10), nil
	case uint8:
		return strconv.FormatUint(uint64(v), 10), nil
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64), nil
	case float32:
		return strconv.FormatFloat(float64(v), 'f', -1, 32), nil
	case bool:
		if v {
			return "1", nil
		}
		return "0", nil
	}
	return "", fmt.Errorf("cannot send a %T", a)
}

// keyless are the commands without a key: any node may serve them.
var keyless = map[string]bool{
	"PING": true, "ECHO": true, "INFO": true, "TIME": true, "DBSIZE": true,
	"FLUSHDB": true, "FLUSHALL": true, "CONFIG": true, "CLIENT": true,
	"SCRIPT": true, "FUNCTION": true, "ACL": true, "CLUSTER": true,
	"COMMAND": true, "WAIT": true, "WAITAOF": true, "PUBLISH": true,
	"PUBSUB": true, "KEYS": true, "SCAN": true, "RANDOMKEY": true,
	"SELECT": true, "HELLO": true, "AUTH": true, "SAVE": true, "BGSAVE": true,
	"BGREWRITEAOF": true, "LASTSAVE": true, "DEBUG": true, "SLOWLOG": true,
	"LATENCY": true, "ROLE": true, "REPLICAOF": true, "SLAVEOF": true,
	"SHUTDOWN": true, "SWAPDB": true, "MULTI": true, "EXEC": true,
	"DISCARD": true, "UNWATCH": true, "READONLY": true, "READWRITE": true,
	"RESET": true, "LOLWUT": true, "MODULE": true, "FAILOVER": true,
	"MONITOR": true, "SYNC": true, "PSYNC": true, "QUIT": true,
}

// keyIndex returns the index of the first key of a command, 0 for none. In a
// cluster a wrong guess costs a MOVED reply (which Redis sends before
// running anything), never a wrong result: the server checks every key.
func keyIndex(name string, parts []string) int {
	switch {
	case keyless[name]:
		return 0
	case name == "EVAL" || name == "EVALSHA" || name == "EVAL_RO" || name == "EVALSHA_RO" || name == "FCALL" ||
		name == "FCALL_RO":
		// EVALSHA sha numkeys key …
		if len(parts) > 3 {
			if n, err := strconv.Atoi(parts[2]); err == nil && n > 0 {
				return 3
			}
		}
		return 0
	case name == "OBJECT" || name == "MEMORY" || name == "XINFO" || name == "XGROUP":
		// OBJECT ENCODING key, MEMORY USAGE key …
		if len(parts) > 2 {
			return 2
		}
		return 0
	case len(parts) > 1:
		return 1
	}
	return 0
}
