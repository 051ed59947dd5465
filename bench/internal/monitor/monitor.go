package monitor

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lockbridge/lockbridge/internal/protocol/resp"
)

// Conn is a set-up connection (a resp.Conn): its own commands are left out
// of the counts.
type Conn struct{ *resp.Conn }

// Dial connects to addr.
func Dial(addr string) (*Conn, error) {
	c, err := resp.Dial(addr, 30*time.Second)
	if err != nil {
		return nil, err
	}
	return &Conn{c}, nil
}

// ReplyError is an error reply.
type ReplyError = resp.Error

// Info returns the INFO section as key/value pairs.
func (c *Conn) Info(section string) (map[string]string, error) {
	v, err := c.Do("INFO", section)
	if err != nil {
		return nil, err
	}
	text, _ := v.(string)
	return resp.ParseInfo(text), nil
}

// CommandStat is one command's line of INFO commandstats.
type CommandStat struct {
	Calls int64
	Usec  int64 // time spent executing, in µs
}

// CommandStats returns INFO commandstats by upper-case command name. Redis
// counts the commands run inside scripts under their own names as well, and a
// script's time under EVAL/EVALSHA includes them.
func (c *Conn) CommandStats() (map[string]CommandStat, error) {
	info, err := c.Info("commandstats")
	if err != nil {
		return nil, err
	}
	stats := map[string]CommandStat{}
	for k, v := range info {
		name, ok := strings.CutPrefix(k, "cmdstat_")
		if !ok {
			continue
		}
		var st CommandStat
		for _, f := range strings.Split(v, ",") {
			if n, ok := strings.CutPrefix(f, "calls="); ok {
				st.Calls, _ = strconv.ParseInt(n, 10, 64)
			}
			if n, ok := strings.CutPrefix(f, "usec="); ok {
				st.Usec, _ = strconv.ParseInt(n, 10, 64)
			}
		}
		stats[strings.ToUpper(name)] = st
	}
	return stats, nil
}

// Counts is what a Counter saw.
type Counts struct {
	// Sent counts the top-level commands by name: the round trips.
	Sent map[string]int64
	// InScript counts the commands scripts ran, by name.
	InScript map[string]int64
}

// RoundTrips is the number of top-level commands.
func (c Counts) RoundTrips() int64 { return sum(c.Sent) }

// ScriptCommands is the number of commands run inside scripts.
func (c Counts) ScriptCommands() int64 { return sum(c.InScript) }

func sum(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

// Breakdown formats m per op, e.g. "SETNX 1 + GET 1 + GETSET 1".
func Breakdown(m map[string]int64, ops int) string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	parts := make([]string, 0, len(names))
	for _, k := range names {
		v := strconv.FormatFloat(float64(m[k])/float64(ops), 'f', 2, 64)
		v = strings.TrimRight(strings.TrimRight(v, "0"), ".")
		parts = append(parts, k+" "+v)
	}
	if len(parts) == 0 {
		return "–"
	}
	return strings.Join(parts, " + ")
}

// Counter reads MONITOR on its own connection.
type Counter struct {
	mon     *Conn
	ctl     *Conn // sends the end marker; its commands are not counted
	exclude map[string]bool

	mu     sync.Mutex
	counts Counts
	marker string
	seen   chan struct{}
	err    error
	done   chan struct{}
}

// Start opens a MONITOR on addr. Commands sent by the connections in exclude
// (by local address), and by the Counter itself, are not counted.
func Start(addr string, exclude ...*Conn) (*Counter, error) {
	mon, err := Dial(addr)
	if err != nil {
		return nil, err
	}
	if v, err := mon.Do("MONITOR"); err != nil || v != "OK" {
		_ = mon.Close()
		return nil, fmt.Errorf("monitor: MONITOR: %v %v", v, err)
	}
	ctl, err := Dial(addr)
	if err != nil {
		_ = mon.Close()
		return nil, err
	}
	k := &Counter{mon: mon, ctl: ctl, exclude: map[string]bool{ctl.LocalAddr(): true}, done: make(chan struct{})}
	for _, c := range exclude {
		k.exclude[c.LocalAddr()] = true
	}
	k.reset()
	go k.read()
	return k, nil
}

func (k *Counter) reset() {
	k.counts = Counts{Sent: map[string]int64{}, InScript: map[string]int64{}}
}

func (k *Counter) read() {
	defer close(k.done)
	for {
		v, err := k.mon.Receive()
		if err != nil {
			k.mu.Lock()
			k.err = err
			k.mu.Unlock()
			return
		}
		line, isStatus := v.(string) // MONITOR lines are status replies
		if !isStatus {
			continue
		}
		src, cmd, ok := parse(line)
		if !ok {
			continue
		}
		k.mu.Lock()
		switch {
		case src == "lua":
			k.counts.InScript[cmd]++
		case k.exclude[src]:
			if k.marker != "" && cmd == "ECHO" && strings.Contains(line, k.marker) {
				close(k.seen)
				k.marker = ""
			}
		default:
			k.counts.Sent[cmd]++
		}
		k.mu.Unlock()
	}
}

// parse splits `1700000000.123456 [0 127.0.0.1:5000] "set" "k"` into the
// source ("127.0.0.1:5000" or "lua") and the upper-cased command.
func parse(line string) (src, cmd string, ok bool) {
	i := strings.IndexByte(line, '[')
	j := strings.IndexByte(line, ']')
	if i < 0 || j < i {
		return "", "", false
	}
	inner := line[i+1 : j]
	if sp := strings.IndexByte(inner, ' '); sp >= 0 {
		inner = inner[sp+1:]
	}
	rest := strings.TrimSpace(line[j+1:])
	if len(rest) < 2 || rest[0] != '"' {
		return "", "", false
	}
	end := strings.IndexByte(rest[1:], '"')
	if end < 0 {
		return "", "", false
	}
	return inner, strings.ToUpper(rest[1 : 1+end]), true
}

// Measure returns what was counted while f ran. f must not run concurrently
// with another Measure.
func (k *Counter) Measure(f func() error) (Counts, error) {
	if err := k.sync(); err != nil { // drain anything still in flight
		return Counts{}, err
	}
	k.mu.Lock()
	k.reset()
	k.mu.Unlock()
	if err := f(); err != nil {
		return Counts{}, err
	}
	if err := k.sync(); err != nil {
		return Counts{}, err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	c := k.counts
	k.reset()
	return c, nil
}

var markers int64

// sync sends a marker and waits until MONITOR has shown it: everything sent
// before it has then been counted.
func (k *Counter) sync() error {
	k.mu.Lock()
	markers++
	k.marker = fmt.Sprintf("lockbridge-bench-marker-%d-%d", time.Now().UnixNano(), markers)
	seen := make(chan struct{})
	k.seen = seen
	marker := k.marker
	k.mu.Unlock()
	if _, err := k.ctl.Do("ECHO", marker); err != nil {
		return err
	}
	select {
	case <-seen:
		return nil
	case <-k.done:
		return fmt.Errorf("monitor: connection ended: %v", k.err)
	case <-time.After(30 * time.Second):
		return errors.New("monitor: marker not seen within 30s")
	}
}

// Close ends the MONITOR.
func (k *Counter) Close() error {
	err := k.mon.Close()
	_ = k.ctl.Close()
	<-k.done
	return err
}
