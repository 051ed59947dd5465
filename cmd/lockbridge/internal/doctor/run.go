package doctor

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"

	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/driver/keyslot"
	"github.com/lockbridge/lockbridge/internal/protocol/resp"
)

// ScratchPrefix starts every key and channel Run writes to.
const ScratchPrefix = "lockbridge:doctor:"

// scratchTTL is the PX of the scratch keys, so they go even when DEL is
// denied.
const scratchTTL = "60000"

// run is the state of one Run: the target, and what was read once and is
// needed by several checks.
type run struct {
	t   Target
	cfg config

	info    map[string]map[string]infoResult // node → section → INFO
	shards  []shard                          // masters by slot range; nil for a single server
	slotErr error                            // why shards is unknown
	scratch []string                         // keys written, for cleanup
	aclDone bool
	acl     aclResult
}

type infoResult struct {
	fields map[string]string
	err    error
}

// shard is one master's slot ranges and the scratch hash tag that lands
// on it.
type shard struct {
	addr   string
	ranges [][2]int
	tag    string // "" when none was found (no slots)
}

func newRun(t Target, cfg config) *run {
	return &run{t: t, cfg: cfg, info: map[string]map[string]infoResult{}}
}

// do sends one command to c within the per-call timeout.
func (r *run) do(ctx context.Context, c driver.Client, args ...any) (any, error) {
	cctx, cancel := context.WithTimeout(ctx, r.cfg.timeout)
	defer cancel()
	return c.Do(cctx, args...)
}

// infoOf returns an INFO section of node n (cached).
func (r *run) infoOf(ctx context.Context, n Node, section string) (map[string]string, error) {
	m := r.info[n.Addr]
	if m == nil {
		m = map[string]infoResult{}
		r.info[n.Addr] = m
	}
	if res, ok := m[section]; ok {
		return res.fields, res.err
	}
	v, err := r.do(ctx, n.Client, "INFO", section)
	var res infoResult
	switch s, ok := v.(string); {
	case err != nil:
		res.err = fmt.Errorf("INFO %s: %w", section, err)
	case !ok:
		res.err = fmt.Errorf("INFO %s: unexpected reply %T", section, v)
	default:
		res.fields = resp.ParseInfo(s)
	}
	m[section] = res
	return res.fields, res.err
}

// configOf returns one CONFIG GET parameter of node n.
func (r *run) configOf(ctx context.Context, n Node, param string) (string, error) {
	v, err := r.do(ctx, n.Client, "CONFIG", "GET", param)
	if err != nil {
		return "", fmt.Errorf("CONFIG GET %s: %w", param, err)
	}
	a, ok := v.([]any)
	if !ok || len(a) != 2 {
		if ok && len(a) == 0 {
			return "", fmt.Errorf("CONFIG GET %s: no such parameter", param)
		}
		return "", fmt.Errorf("CONFIG GET %s: unexpected reply %#v", param, v)
	}
	s, _ := a[1].(string)
	return s, nil
}

// access is what the server said to one command, as far as ACLs go.
type access int

const (
	allowed       access = iota // ACL let it through (it may have failed for another reason)
	deniedCommand               // ACL denies the command
	deniedKey                   // ACL denies the scratch key
	deniedChannel               // ACL denies the scratch channel
	missing                     // unknown command: renamed or absent
	noAnswer                    // no reply to judge by (timeout, connection lost)
	notSent                     // could not be sent where it needed checking (inside a script)
)

// classify judges an error reply (or an ACL DRYRUN answer, or an error
// returned by redis.pcall inside the probe script).
func classify(msg string) access {
	m := strings.ToLower(msg)
	switch {
	case m == "" || m == "ok":
		return allowed
	case strings.Contains(m, "unknown command") || strings.Contains(m, "command not found") ||
		strings.Contains(m, "unknown subcommand") ||
		(strings.HasPrefix(m, "err command '") && strings.Contains(m, "not found")):
		return missing
	case strings.Contains(m, "channel") &&
		(strings.Contains(m, "no permissions") || strings.Contains(m, "can't publish") ||
			strings.Contains(m, "can't subscribe") || strings.HasPrefix(m, "noperm")):
		return deniedChannel
	case strings.Contains(m, "key") &&
		(strings.Contains(m, "no permissions to access") || strings.Contains(m, "can't access")):
		return deniedKey
	case strings.Contains(m, "no permissions to run") || strings.Contains(m, "can't run this command") ||
		strings.HasPrefix(m, "noperm") || strings.Contains(m, "acl failure"):
		return deniedCommand
	}
	return allowed
}

// classifyErr judges the error of a command sent directly.
func classifyErr(err error) access {
	if err == nil {
		return allowed
	}
	var re driver.ReplyError
	if errors.As(err, &re) {
		return classify(string(re))
	}
	// An error that is not a reply: the subscription path reports the
	// server's refusal as a lost connection carrying the reply's text.
	if a := classify(err.Error()); a != allowed {
		return a
	}
	return noAnswer
}

// transport reports whether err is a failure to talk to Redis (no answer,
// a lost connection) rather than an answer.
func transport(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.As(err, &ne)
}

// denied reports whether err is an ACL refusal of any kind.
func denied(err error) bool {
	a := classifyErr(err)
	return a == deniedCommand || a == deniedKey || a == deniedChannel
}

// shardsOf returns the masters by slot range (nil for a single server), each
// with a scratch hash tag that lands in its slots.
func (r *run) shardsOf(ctx context.Context) ([]shard, error) {
	if !r.t.Client.Cluster() {
		return []shard{{addr: r.t.Nodes[0].Addr, tag: newTag()}}, nil
	}
	if r.shards != nil || r.slotErr != nil {
		return r.shards, r.slotErr
	}
	r.shards, r.slotErr = r.clusterShards(ctx)
	return r.shards, r.slotErr
}

func (r *run) clusterShards(ctx context.Context) ([]shard, error) {
	var v any
	var err error
	for _, n := range r.t.Nodes {
		if v, err = r.do(ctx, n.Client, "CLUSTER", "SLOTS"); err == nil {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("CLUSTER SLOTS: %w", err)
	}
	rows, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("CLUSTER SLOTS: unexpected reply %T", v)
	}
	byAddr := map[string]*shard{}
	var order []string
	for _, row := range rows {
		a, ok := row.([]any)
		if !ok || len(a) < 3 {
			return nil, fmt.Errorf("CLUSTER SLOTS: unexpected row %#v", row)
		}
		from, ok1 := a[0].(int64)
		to, ok2 := a[1].(int64)
		m, ok3 := a[2].([]any)
		if !ok1 || !ok2 || !ok3 || len(m) < 2 {
			return nil, fmt.Errorf("CLUSTER SLOTS: unexpected row %#v", row)
		}
		host, _ := m[0].(string)
		port, _ := m[1].(int64)
		addr := host + ":" + strconv.FormatInt(port, 10)
		s := byAddr[addr]
		if s == nil {
			s = &shard{addr: addr}
			byAddr[addr] = s
			order = append(order, addr)
		}
		s.ranges = append(s.ranges, [2]int{int(from), int(to)})
	}
	out := make([]shard, 0, len(order))
	for _, addr := range order {
		s := byAddr[addr]
		s.tag = tagIn(s.ranges)
		out = append(out, *s)
	}
	return out, nil
}

// newTag returns a random hash tag for scratch keys.
func newTag() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// tagIn returns a hash tag whose slot is in one of ranges ("" if none is
// found: the ranges are empty).
func tagIn(ranges [][2]int) string {
	base := newTag()
	for i := 0; i < 1<<16; i++ {
		tag := base + "-" + strconv.Itoa(i)
		slot := keyslot.Of("{" + tag + "}")
		for _, rg := range ranges {
			if slot >= rg[0] && slot <= rg[1] {
				return tag
			}
		}
	}
	return ""
}

// key returns a scratch key in tag's slot and remembers it for cleanup.
func (r *run) key(tag, name string) string {
	k := ScratchPrefix + "{" + tag + "}:" + name
	for _, s := range r.scratch {
		if s == k {
			return k
		}
	}
	r.scratch = append(r.scratch, k)
	return k
}

// channel returns a scratch channel in tag's slot, named like a lock's
// release channel.
func channel(tag string) string {
	return ScratchPrefix + "{" + tag + "}:released"
}

// cleanup deletes the scratch keys (best effort: they expire anyway).
func (r *run) cleanup(ctx context.Context) {
	ctx = context.WithoutCancel(ctx)
	for _, k := range r.scratch {
		_, _ = r.do(ctx, r.t.Client, "DEL", k)
	}
}

// plural returns "1 thing" or "n things".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

// errText is err's message on one line.
func errText(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}
