package doctor

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/internal/runtime/check"
)

// Severity grades a finding. The order is OK < Warn < Unknown < Danger:
// merging the findings of several nodes keeps the worst.
type Severity int

// The severities.
const (
	// OK: nothing to do.
	OK Severity = iota
	// Warn: a risk the operator should know and may accept (a restart
	// without persistence loses locks); it does not fail the run.
	Warn
	// Unknown: the check could not tell (a command it needs was denied, or
	// Redis did not answer).
	Unknown
	// Danger: lockbridge is unsafe or will fail on this server as it is.
	Danger
)

var severityNames = [...]string{OK: "ok", Warn: "warn", Unknown: "unknown", Danger: "danger"}

// String returns "ok", "warn", "unknown" or "danger".
func (s Severity) String() string {
	if s < OK || s > Danger {
		return fmt.Sprintf("Severity(%d)", int(s))
	}
	return severityNames[s]
}

// MarshalText encodes the severity as its name.
func (s Severity) MarshalText() ([]byte, error) {
	if s < OK || s > Danger {
		return nil, fmt.Errorf("doctor: %w: severity %d", lockbridge.ErrInvalid, int(s))
	}
	return []byte(s.String()), nil
}

// The finding IDs, in the order the checks run.
const (
	IDEviction      = "eviction"       // maxmemory-policy
	IDReplication   = "replication"    // role and replicas
	IDPersistence   = "persistence"    // appendonly, appendfsync, save
	IDScripting     = "scripting"      // EVAL runs
	IDACL           = "acl"            // every command lockbridge sends
	IDShardedPubSub = "sharded-pubsub" // SPUBLISH (cluster only)
	IDClusterSlots  = "cluster-slots"  // slot coverage (cluster only)
	IDNamespace     = "namespace"      // phase, registry, sightings (with a namespace)
	IDClock         = "clock"          // this host's clock against the server's TIME
)

// Finding is the outcome of one check.
type Finding struct {
	ID       string   `json:"id"`
	Severity Severity `json:"severity"`
	// Summary is one line in plain words.
	Summary string `json:"summary"`
	// Detail explains the risk and what was seen, per node where it
	// matters; it may span lines.
	Detail string `json:"detail,omitempty"`
	// Fix says what to change, when something should change.
	Fix string `json:"fix,omitempty"`
}

// Report is what Run found.
type Report struct {
	Findings []Finding `json:"findings"`
}

// Worst returns the highest severity among the findings (OK when none).
func (r Report) Worst() Severity {
	w := OK
	for _, f := range r.Findings {
		if f.Severity > w {
			w = f.Severity
		}
	}
	return w
}

// Count returns how many findings have severity s.
func (r Report) Count(s Severity) int {
	n := 0
	for _, f := range r.Findings {
		if f.Severity == s {
			n++
		}
	}
	return n
}

// Node is one server reached directly: the only server, or one master of
// a Redis Cluster.
type Node struct {
	// Addr names the node in findings ("127.0.0.1:6379").
	Addr string
	// Client talks to this node alone (INFO, CONFIG, ACL, TIME and CLUSTER
	// INFO go here).
	Client driver.Client
}

// Target is the deployment to check.
type Target struct {
	// Client is the client lockers would use (for a cluster, one that
	// routes by key): the probes of keyed commands go through it.
	Client driver.Client
	// Nodes are the servers behind Client: the one server, or every
	// master of the cluster.
	Nodes []Node
	// User is the ACL user the connections authenticate as, for ACL
	// DRYRUN when ACL WHOAMI is denied; "" means "default".
	User string
}

// Option configures Run.
type Option func(*config)

type config struct {
	ns      string
	timeout time.Duration
	now     func() time.Time
	err     error
}

// DefaultTimeout bounds each Redis call of Run.
const DefaultTimeout = 5 * time.Second

// WithNamespace adds the check of a migration namespace: its phase,
// registry and legacy sightings, read as the controller reads them.
// Default: none.
func WithNamespace(ns string) Option {
	return func(c *config) {
		if ns == "" || strings.ContainsAny(ns, "{}") {
			c.err = fmt.Errorf("doctor: %w: namespace %q must be non-empty and without braces", lockbridge.ErrInvalid, ns)
			return
		}
		c.ns = ns
	}
}

// WithTimeout bounds each Redis call. Default DefaultTimeout (5 s); it
// must be positive.
func WithTimeout(d time.Duration) Option {
	return func(c *config) {
		if d <= 0 {
			c.err = fmt.Errorf("doctor: %w: timeout %v must be positive", lockbridge.ErrInvalid, d)
			return
		}
		c.timeout = d
	}
}

// WithClock sets this host's clock, which the clock check compares with
// the server's TIME. Default time.Now.
func WithClock(now func() time.Time) Option {
	return func(c *config) {
		if now == nil {
			c.err = fmt.Errorf("doctor: %w: nil clock", lockbridge.ErrInvalid)
			return
		}
		c.now = now
	}
}

// checkFunc is one check: it returns its finding. Checks that do not apply
// (cluster checks on a single server, the namespace check without one)
// return ok=false.
type checkFunc func(ctx context.Context, r *run) (f Finding, ok bool)

// checks are run in this order.
var checks = []checkFunc{
	checkEviction,
	checkReplication,
	checkPersistence,
	checkScripting,
	checkACL,
	checkShardedPubSub,
	checkClusterSlots,
	checkNamespace,
	checkClock,
}

// Run checks t and returns the findings, in the order of the ID constants.
// It changes nothing but short-lived scratch keys under
// "lockbridge:doctor:{…}" (deleted at the end, and set to expire within a
// minute should a DEL be denied) and one message on a scratch channel. A
// check that cannot tell — a command it needs is denied, Redis does not
// answer — yields an Unknown finding and the other checks still run. The
// error is for bad input only (it wraps lockbridge.ErrInvalid).
func Run(ctx context.Context, t Target, opts ...Option) (Report, error) {
	if err := check.Context("doctor", ctx); err != nil {
		return Report{}, err
	}
	if t.Client == nil {
		return Report{}, fmt.Errorf("doctor: %w: nil client", lockbridge.ErrInvalid)
	}
	if len(t.Nodes) == 0 {
		return Report{}, fmt.Errorf("doctor: %w: no nodes", lockbridge.ErrInvalid)
	}
	for i, n := range t.Nodes {
		if n.Client == nil || n.Addr == "" {
			return Report{}, fmt.Errorf("doctor: %w: node %d needs an address and a client", lockbridge.ErrInvalid, i)
		}
	}
	cfg := config{timeout: DefaultTimeout, now: time.Now}
	for _, o := range opts {
		if o == nil {
			return Report{}, fmt.Errorf("doctor: %w: nil option", lockbridge.ErrInvalid)
		}
		o(&cfg)
	}
	if cfg.err != nil {
		return Report{}, cfg.err
	}
	r := newRun(t, cfg)
	defer r.cleanup(ctx)
	var rep Report
	for _, c := range checks {
		if f, ok := c(ctx, r); ok {
			rep.Findings = append(rep.Findings, f)
		}
	}
	return rep, nil
}

// perNode runs fn on every node and merges the findings: one finding when
// every node says the same, else the worst summary with one line per node.
func perNode(ctx context.Context, r *run, id string, fn func(ctx context.Context, n Node) Finding) (Finding, bool) {
	fs := make([]Finding, len(r.t.Nodes))
	addrs := make([]string, len(r.t.Nodes))
	for i, n := range r.t.Nodes {
		fs[i] = fn(ctx, n)
		fs[i].ID = id
		addrs[i] = n.Addr
	}
	return merge(id, addrs, fs), true
}

// merge folds the findings of several nodes (named by addrs) into one.
func merge(id string, addrs []string, fs []Finding) Finding {
	if len(fs) == 1 {
		f := fs[0]
		f.ID = id
		return f
	}
	same := true
	worst := 0
	for i, f := range fs {
		if f.Summary != fs[0].Summary || f.Severity != fs[0].Severity {
			same = false
		}
		if f.Severity > fs[worst].Severity {
			worst = i
		}
	}
	if same {
		f := fs[0]
		f.ID = id
		f.Summary = "every node: " + f.Summary
		return f
	}
	order := make([]int, len(fs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return fs[order[a]].Severity > fs[order[b]].Severity })
	var b strings.Builder
	for _, i := range order {
		fmt.Fprintf(&b, "%s (%s): %s\n", addrs[i], fs[i].Severity, fs[i].Summary)
	}
	w := fs[worst]
	if w.Detail != "" {
		b.WriteString(w.Detail)
	}
	return Finding{
		ID:       id,
		Severity: w.Severity,
		Summary:  fmt.Sprintf("node %s: %s", addrs[worst], w.Summary),
		Detail:   strings.TrimRight(b.String(), "\n"),
		Fix:      w.Fix,
	}
}
