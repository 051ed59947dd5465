package fleet

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	"github.com/lockbridge/lockbridge/bench/internal/monitor"
)

// node is one primary, watched on a connection of its own.
type node struct {
	addr string
	c    *monitor.Conn
}

func dialNode(addr string) (*node, error) {
	c, err := monitor.Dial(addr)
	if err != nil {
		return nil, err
	}
	return &node{addr: addr, c: c}, nil
}

func (n *node) close() { _ = n.c.Close() }

// cpu is the server process's CPU time so far (used_cpu_sys + used_cpu_user
// of INFO cpu): every thread, syscalls included.
func (n *node) cpu() (time.Duration, error) {
	info, err := n.c.Info("cpu")
	if err != nil {
		return 0, err
	}
	sys, err1 := strconv.ParseFloat(info["used_cpu_sys"], 64)
	user, err2 := strconv.ParseFloat(info["used_cpu_user"], 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("fleet: INFO cpu of %s: %v %v", n.addr, err1, err2)
	}
	return time.Duration((sys + user) * float64(time.Second)), nil
}

func (n *node) do(args ...string) (any, error) { return n.c.Do(args...) }

// slow is one SLOWLOG entry: the command's server time and its arguments.
type slow struct {
	d    time.Duration
	args []string
}

// slowlog switches the log to every command (threshold 0) or off, empty.
func (n *node) slowlog(all bool) error {
	th := "-1"
	if all {
		th = "0"
	}
	for _, a := range [][]string{{"CONFIG", "SET", "slowlog-max-len", "1000000"}, {"CONFIG", "SET",
		"slowlog-log-slower-than", th}, {"SLOWLOG", "RESET"}} {
		if _, err := n.do(a...); err != nil {
			return err
		}
	}
	return nil
}

// slowEntries reads the whole SLOWLOG.
func (n *node) slowEntries() ([]slow, error) {
	v, err := n.do("SLOWLOG", "GET", "-1")
	if err != nil {
		return nil, err
	}
	list, _ := v.([]any)
	out := make([]slow, 0, len(list))
	for _, e := range list {
		f, _ := e.([]any)
		if len(f) < 4 {
			continue
		}
		us, _ := f[2].(int64)
		raw, _ := f[3].([]any)
		s := slow{d: time.Duration(us) * time.Microsecond}
		for _, a := range raw {
			str, _ := a.(string)
			s.args = append(s.args, str)
		}
		out = append(out, s)
	}
	return out, nil
}

// memory sums MEMORY USAGE (every element counted: SAMPLES 0) of keys.
func (n *node) memory(keys []string) (int64, error) {
	var sum int64
	for _, k := range keys {
		v, err := n.do("MEMORY", "USAGE", k, "SAMPLES", "0")
		if err != nil {
			return 0, err
		}
		b, _ := v.(int64)
		sum += b
	}
	return sum, nil
}

// scripts names the SHA1s of lockbridge's scripts from the golden vectors
// (testdata/vectors/scripts.json), which name every script sent.
func scripts(root string) (map[string]string, error) {
	b, err := os.ReadFile(filepath.Join(root, "testdata", "vectors", "scripts.json"))
	if err != nil {
		return nil, err
	}
	var v struct {
		Scripts []struct {
			Name string `json:"name"`
			SHA1 string `json:"sha1"`
		} `json:"scripts"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, s := range v.Scripts {
		out[s.SHA1] = filepath.Base(s.Name)
	}
	return out, nil
}

// name is the command as the tables name it: the script's file for an
// EVALSHA, the command otherwise.
func (s slow) name(shas map[string]string) string {
	if len(s.args) == 0 {
		return "?"
	}
	if (s.args[0] == "EVALSHA" || s.args[0] == "evalsha" || s.args[0] == "EVALSHA_RO" || s.args[0] == "evalsha_ro") &&
		len(s.args) > 1 {
		if n, ok := shas[s.args[1]]; ok {
			return n
		}
		return "script " + s.args[1][:min(8, len(s.args[1]))]
	}
	return s.args[0]
}

// quantile returns the q-quantile of ds (sorted here).
func quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	i := int(q*float64(len(ds)-1) + 0.5)
	return ds[i]
}
