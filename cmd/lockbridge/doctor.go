package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/lockbridge/lockbridge/cmd/lockbridge/internal/doctor"
	"github.com/lockbridge/lockbridge/driver/goredis"
	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"
)

const doctorSummary = `Check a Redis against lockbridge's failure model and say what is dangerous:

  eviction        maxmemory-policy: allkeys-* can evict any lock or namespace key,
                  volatile-* the lock keys with a TTL (modern locks): danger
  replication     connected to a replica: danger; a primary with replicas: warn
                  (a failover can lose the last lock writes)
  persistence     anything short of appendonly yes + appendfsync always: warn
                  (a restart can lose locks)
  scripting       Lua scripts do not run: danger
  acl             a command lockbridge sends (directly or inside its scripts) is
                  denied to this user: danger (SUBSCRIBE/SSUBSCRIBE: warn, waiters
                  poll); checked with ACL DRYRUN, or else by use on scratch keys
  sharded-pubsub  cluster only: no SPUBLISH (Redis < 7): danger
  cluster-slots   cluster only: a slot not served or cluster_state not ok: danger
  namespace       with --namespace: live clients in phases that do not exclude each
                  other, or a legacy-only locker seen past dual-write: danger
  clock           this host's clock against the server's TIME: informational only

A check that cannot tell (a least-privilege user may not run CONFIG, INFO or
ACL; no answer) says "unknown"; the other checks still run. Warnings never
fail the run. doctor writes only scratch keys lockbridge:doctor:{…}:… (one
minute PX, deleted at the end) and publishes once on a scratch channel.

Exit codes:
  0 nothing dangerous, nothing unknown (warnings allowed)
  1 something is dangerous (or Redis could not be reached)
  6 some check could not tell, and nothing is dangerous
  2 bad usage`

func newDoctorCmd(e *env, g *globalFlags) *cobra.Command {
	var verbose bool
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "check a Redis against lockbridge's failure model: what is dangerous",
		Long:  doctorSummary,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 0 {
				return usageErrorf("doctor takes no arguments")
			}
			asJSON, err := g.wantJSON("doctor", true)
			if err != nil {
				return err
			}
			return runDoctor(cmd.Context(), e, &g.conn, verbose, asJSON)
		},
	}
	cmd.Flags().BoolVar(&verbose, "verbose", false, "print the detail of every finding, not only of those that are not ok")
	return cmd
}

// doctorJSON is `doctor --output json` (schema lockbridge.doctor/v1,
// docs/cli.md).
type doctorJSON struct {
	Schema   string           `json:"schema"`
	Server   string           `json:"server"`
	User     string           `json:"user"`
	Findings []doctor.Finding `json:"findings"` // most severe first
	Counts   map[string]int   `json:"counts"`   // by severity
}

func runDoctor(ctx context.Context, e *env, cf *connFlags, verbose, asJSON bool) error {
	var opts []doctor.Option
	if ns := cf.nsGiven(e); ns != "" {
		if strings.ContainsAny(ns, "{}") {
			return usageErrorf("doctor: namespace %q must be without braces", ns)
		}
		opts = append(opts, doctor.WithNamespace(ns))
	}
	opts = append(opts, doctor.WithTimeout(cf.timeout))

	uc, where, err := cf.client(e, false)
	if err != nil {
		return err
	}
	defer uc.Close()
	if err := cf.ping(ctx, uc, where); err != nil {
		return err
	}
	t, user, err := doctorTarget(ctx, uc, cf.timeout)
	if err != nil {
		return fmt.Errorf("doctor: %s: %v", where, oneLine(err.Error()))
	}
	rep, err := doctor.Run(ctx, t, opts...)
	if err != nil {
		return usageErrorf("%v", err)
	}
	if asJSON {
		doc := doctorJSON{Schema: "lockbridge.doctor/v1", Server: where, User: user, Findings: sortedFindings(rep),
			Counts: map[string]int{}}
		for _, s := range []doctor.Severity{doctor.OK, doctor.Warn, doctor.Unknown, doctor.Danger} {
			doc.Counts[s.String()] = rep.Count(s)
		}
		if err := writeJSON(e.stdout, doc); err != nil {
			return err
		}
		return doctorOutcome(rep)
	}
	fmt.Fprintf(e.stdout, "lockbridge doctor: %s, user %q\n\n", where, user)
	printFindings(e.stdout, rep, verbose)
	return doctorOutcome(rep)
}

// doctorTarget describes uc for doctor.Run: the client itself, and the
// node(s) behind it.
func doctorTarget(ctx context.Context, uc redis.UniversalClient, timeout time.Duration) (doctor.Target, string, error) {
	t := doctor.Target{Client: goredis.New(uc)}
	switch c := uc.(type) {
	case *redis.Client:
		t.User = c.Options().Username
		t.Nodes = []doctor.Node{{Addr: c.Options().Addr, Client: t.Client}}
	case *redis.ClusterClient:
		t.User = c.Options().Username
		var mu sync.Mutex
		fctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		err := c.ForEachMaster(fctx, func(ctx context.Context, m *redis.Client) error {
			mu.Lock()
			defer mu.Unlock()
			t.Nodes = append(t.Nodes, doctor.Node{Addr: m.Options().Addr, Client: goredis.New(m)})
			return nil
		})
		if err != nil {
			return t, "", err
		}
		if len(t.Nodes) == 0 {
			return t, "", errors.New("the cluster has no master serving slots")
		}
		sort.Slice(t.Nodes, func(i, j int) bool { return t.Nodes[i].Addr < t.Nodes[j].Addr })
	default:
		return t, "", fmt.Errorf("unsupported client %T", uc)
	}
	user := t.User
	if user == "" {
		user = "default"
	}
	return t, user, nil
}

// doctorOutcome turns the report into the exit code.
func doctorOutcome(rep doctor.Report) error {
	ids := func(s doctor.Severity) string {
		var v []string
		for _, f := range rep.Findings {
			if f.Severity == s {
				v = append(v, f.ID)
			}
		}
		return strings.Join(v, ", ")
	}
	switch {
	case rep.Count(doctor.Danger) > 0:
		return &exitErr{exitError, fmt.Errorf("doctor: dangerous: %s", ids(doctor.Danger))}
	case rep.Count(doctor.Unknown) > 0:
		return &exitErr{exitUndetermined, fmt.Errorf("doctor: nothing dangerous found, but could not tell: %s",
			ids(doctor.Unknown))}
	}
	return nil
}

var severityLabel = map[doctor.Severity]string{
	doctor.OK: "OK", doctor.Warn: "WARN", doctor.Unknown: "UNKNOWN", doctor.Danger: "DANGER",
}

// sortedFindings are the findings, the most severe first.
func sortedFindings(rep doctor.Report) []doctor.Finding {
	fs := append([]doctor.Finding{}, rep.Findings...)
	sort.SliceStable(fs, func(i, j int) bool { return fs[i].Severity > fs[j].Severity })
	return fs
}

// printFindings prints the findings, the most severe first.
func printFindings(w io.Writer, rep doctor.Report, verbose bool) {
	fs := sortedFindings(rep)
	const indent = "           "
	for _, f := range fs {
		fmt.Fprintf(w, "%-8s %s: %s\n", severityLabel[f.Severity], f.ID, safeText(f.Summary))
		if f.Detail != "" && (verbose || f.Severity != doctor.OK) {
			for _, line := range strings.Split(safeText(f.Detail), "\n") {
				for _, l := range wrap(line, 100-len(indent)) {
					fmt.Fprintf(w, "%s%s\n", indent, l)
				}
			}
		}
		if f.Fix != "" && f.Severity != doctor.OK {
			for i, l := range wrap("fix: "+safeText(f.Fix), 100-len(indent)) {
				if i > 0 {
					l = "  " + l
				}
				fmt.Fprintf(w, "%s%s\n", indent, l)
			}
		}
	}
	warnings := "warnings"
	if rep.Count(doctor.Warn) == 1 {
		warnings = "warning"
	}
	fmt.Fprintf(w, "\n%d dangerous, %d could not tell, %d %s, %d ok\n",
		rep.Count(doctor.Danger), rep.Count(doctor.Unknown), rep.Count(doctor.Warn), warnings, rep.Count(doctor.OK))
}

// safeText escapes what a terminal would interpret (text from Redis or
// from registry entries may hold anything); newlines stay.
func safeText(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r == '\n' || unicode.IsPrint(r) {
			b.WriteRune(r)
			continue
		}
		q := fmt.Sprintf("%+q", string(r))
		b.WriteString(q[1 : len(q)-1])
	}
	return b.String()
}

// wrap splits s into lines of at most width columns, at spaces.
func wrap(s string, width int) []string {
	words := strings.Fields(s)
	if len(words) == 0 {
		return []string{""}
	}
	var lines []string
	cur := words[0]
	for _, w := range words[1:] {
		if len(cur)+1+len(w) > width {
			lines = append(lines, cur)
			cur = w
			continue
		}
		cur += " " + w
	}
	return append(lines, cur)
}
