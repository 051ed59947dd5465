package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/legacy"
	"github.com/lockbridge/lockbridge/migrate/control"
	"github.com/lockbridge/lockbridge/modern"
	"github.com/spf13/cobra"
)

const cleanupSummary = `Remove what the migration leaves behind once the fleet has run modern for the
quiet period (by the server's clock) and no step is rolling out: the legacy
sighting, the registry entries of dead clients (live ones stay: they are
heartbeats), and the leftover legacy keys of the lock names given with --key.

A legacy key is removed only when every value codec that parses it reads an
expiry older than --margin by this host's clock (the one judgement the Java
scheme itself makes: a stored expiry below the caller's now; a value that
reads as a time before 2001 is not a lock's and is kept), and only if it
still holds the bytes listed (compare-and-delete): a key that changed
meanwhile — a Java GETSET, a new lock — is left alone. Its modern key is not
touched (it expires by its own TTL); fence counters stay.

--dry-run lists what would be removed and removes nothing. Refused (exit 4,
nothing removed) when the namespace is not at modern, the quiet period has
not passed since it got there, or a step is still rolling out.

Exit codes: 0 done (or listed), 4 refused, 1 an error or a key changed
meanwhile, 2 bad usage.`

// defaultCleanupMargin is how far past its stored expiry a legacy key must
// be, by this host's clock, before cleanup removes it.
const defaultCleanupMargin = time.Hour

// minCleanupMargin is the least --margin accepted: it must cover the clock
// skew between the Java hosts and this one.
const minCleanupMargin = time.Minute

func newCleanupCmd(e *env, g *globalFlags) *cobra.Command {
	var (
		o     cleanupOpts
		dry   bool
		quiet time.Duration
	)
	cmd := &cobra.Command{
		Use:   "cleanup --namespace NS [--key NAME]... [--dry-run]",
		Short: "remove the sighting, dead registry entries and expired legacy keys once the fleet is at modern",
		Long:  cleanupSummary,
		Args:  exactArgs(0, "fleet cleanup takes no arguments: name lock names with --key"),
		RunE: func(cmd *cobra.Command, args []string) error {
			asJSON, err := g.wantJSON("fleet cleanup", true)
			if err != nil {
				return err
			}
			ns := g.conn.nsGiven(e)
			if ns == "" {
				return usageErrorf("fleet cleanup removes the namespace's evidence: name it with --namespace (or " +
					"LOCKBRIDGE_NAMESPACE)")
			}
			if quiet < control.DefaultQuietPeriod {
				return usageErrorf("fleet cleanup: --quiet %v is below the default %v: the evidence is kept for at least that long",
					quiet, control.DefaultQuietPeriod)
			}
			if cmd.Flags().Changed("force") {
				return usageErrorf("fleet cleanup has no --force: it acts only once the migration has ended")
			}
			if o.margin < minCleanupMargin {
				return usageErrorf("fleet cleanup: --margin %v: want at least %v (it must cover the clock skew between the Java "+
					"hosts and this one)", o.margin, minCleanupMargin)
			}
			if _, err := keyCodecs(o.kc); err != nil {
				return err
			}
			for _, n := range o.names {
				if n == "" {
					return usageErrorf("fleet cleanup: --key must not be empty")
				}
			}
			return runCleanup(cmd.Context(), e, &g.conn, ns, quiet, o, dry, asJSON)
		},
	}
	cmd.Flags().StringArrayVar(&o.names, "key", nil, "a lock name whose leftover legacy key to remove (repeatable)")
	cmd.Flags().StringVar(&o.kc, "key-codec", "auto",
		"how the Java services encode the names: raw, jdk-string (or java-string), or auto: both")
	cmd.Flags().DurationVar(&o.margin, "margin", defaultCleanupMargin,
		"how long past its stored expiry (by this host's clock) a legacy key must be")
	cmd.Flags().BoolVar(&dry, "dry-run", false, "list what would be removed; remove nothing")
	// Not a flag of cleanup: taken only to refuse it with the reason.
	cmd.Flags().Bool("force", false, "")
	_ = cmd.Flags().MarkHidden("force")
	cmd.Flags().DurationVar(&quiet, "quiet", control.DefaultQuietPeriod,
		"how long the fleet must have run modern, by the server's clock (at least the default)")
	return cmd
}

type cleanupOpts struct {
	names  []string
	kc     string
	margin time.Duration
}

// legacyLeftover is one legacy key looked at, and what cleanup does with it.
type legacyLeftover struct {
	name    string
	codec   legacy.KeyCodec
	key     string
	info    keyInfo
	expires time.Time // the latest expiry a parsing codec reads; zero when none
	remove  bool
	reason  string // why it is kept, or what happened
}

func runCleanup(ctx context.Context, e *env, cf *connFlags, ns string, quiet time.Duration, o cleanupOpts, dry,
	asJSON bool) error {
	c, where, closeFn, err := cf.dialAt(ctx, e)
	if err != nil {
		return err
	}
	defer closeFn()
	ctl, err := control.New(c, ns, control.WithQuietPeriod(quiet))
	if err != nil {
		return usageErrorf("%v", err)
	}
	cctx, cancel := cf.callCtx(ctx)
	defer cancel()
	refused := func(err error) error {
		if errors.Is(err, control.ErrUnsafeStep) {
			return &exitErr{exitUnsafe, fmt.Errorf("%w\n(namespace %s on %s: nothing removed)", err, printable(ns), where)}
		}
		return err
	}
	// The namespace first: nothing is removed, legacy keys included, unless
	// the fleet has ended its migration.
	plan, err := ctl.Cleanup(cctx, true)
	if err != nil {
		return refused(err)
	}
	leftovers, err := listLeftovers(cctx, c, o, time.Now())
	if err != nil {
		return err
	}
	done := plan
	changed := 0
	if !dry {
		if done, err = ctl.Cleanup(cctx, false); err != nil {
			return refused(err)
		}
		if changed, err = removeLeftovers(cctx, c, leftovers); err != nil {
			return err
		}
	}
	if asJSON {
		if err := writeJSON(e.stdout, cleanupDoc(ns, where, quiet, o.margin, dry, done, leftovers)); err != nil {
			return err
		}
	} else {
		printCleanup(e, ns, where, dry, done, leftovers)
	}
	if changed > 0 {
		return fmt.Errorf("fleet cleanup: %d legacy key(s) changed meanwhile and were left alone", changed)
	}
	return nil
}

// removeLeftovers deletes each legacy key judged removable if it still
// holds the bytes listed; one that changed is marked kept. It returns how
// many changed.
func removeLeftovers(ctx context.Context, c driver.Client, leftovers []legacyLeftover) (int, error) {
	changed := 0
	for i := range leftovers {
		l := &leftovers[i]
		if !l.remove {
			continue
		}
		r, err := c.Eval(ctx, delIfSame, []string{l.key}, l.info.value)
		if err != nil {
			return changed, fmt.Errorf("delete %s: %w", quote(l.key), err)
		}
		if r != int64(1) {
			l.remove, l.reason = false, "changed since it was listed: left alone"
			changed++
		}
	}
	return changed, nil
}

// listLeftovers reads the legacy keys of the names and judges each by
// now, this host's clock.
func listLeftovers(ctx context.Context, c driver.Client, o cleanupOpts, now time.Time) ([]legacyLeftover, error) {
	var out []legacyLeftover
	seen := map[string]bool{}
	for _, name := range o.names {
		keys, err := lockKeys(name, o.kc)
		if err != nil {
			return nil, err
		}
		for _, k := range keys {
			if seen[k.key] {
				continue
			}
			seen[k.key] = true
			info, err := readKey(ctx, c, k.key)
			if err != nil {
				return nil, err
			}
			if !info.exists() {
				continue
			}
			out = append(out, judgeLeftover(legacyLeftover{name: name, codec: k.codec, key: k.key, info: info}, o.margin, now))
		}
	}
	return out, nil
}

// plausibleExpiry is the earliest expiry cleanup takes for a legacy lock's:
// a value below it (1e9 s, 1e12 ms: September 2001) is some other number —
// a counter, an id — stored under a name given by mistake, and is kept.
var plausibleExpiry = time.Unix(1_000_000_000, 0)

// ownKey reports a key lockbridge itself writes (a derived modern key, a
// fence counter, a namespace key), which cleanup never takes for a legacy
// key whatever name it was given.
func ownKey(key string) bool {
	return strings.HasSuffix(key, ":modern") || strings.HasSuffix(key,
		":modern"+modern.FenceSuffix) || strings.HasPrefix(key, "lockbridge:{")
}

// judgeLeftover decides whether a legacy key goes: every value codec that
// parses it must read an expiry at least margin before now.
func judgeLeftover(l legacyLeftover, margin time.Duration, now time.Time) legacyLeftover {
	if ownKey(l.key) {
		l.reason = "a key lockbridge writes (a modern key, a fence counter or a namespace key), not a legacy one"
		return l
	}
	if !l.info.isString() {
		l.reason = fmt.Sprintf("a %s, not a lock", l.info.typ)
		return l
	}
	parsed := 0
	l.remove = true
	for _, vc := range legacy.ValueCodecs() {
		v, err := vc.Decode(l.info.value)
		if err != nil {
			continue
		}
		parsed++
		x := decodeExpiry(v, now)
		if x.at.After(l.expires) {
			l.expires = x.at
		}
		switch {
		case x.at.Before(plausibleExpiry):
			l.remove, l.reason = false, fmt.Sprintf("the %s codec reads %s, not a plausible lock expiry: not a legacy lock", vc,
				x.at.UTC().Format(time.RFC3339))
		case !x.expired && l.remove:
			l.remove, l.reason = false, fmt.Sprintf("live by the %s codec: %v left", vc, x.left.Round(time.Millisecond))
		case x.expired && x.ago < margin && l.remove:
			l.remove, l.reason = false, fmt.Sprintf("expired %s ago by the %s codec, less than the margin %v", ago(x.ago), vc,
				margin)
		}
	}
	if parsed == 0 {
		l.remove, l.reason = false, "no legacy value codec parses it: not a legacy lock"
	}
	return l
}

func printCleanup(e *env, ns, where string, dry bool, done control.Cleanup, leftovers []legacyLeftover) {
	w := e.stdout
	verb := "removed"
	if dry {
		verb = "would remove"
		fmt.Fprintf(w, "namespace %s on %s: dry run, nothing removed\n", printable(ns), where)
	} else {
		fmt.Fprintf(w, "namespace %s on %s: at modern since %s\n", printable(ns), where,
			done.Since.Local().Format(timeLayout))
	}
	switch s := done.Sighting; {
	case !s.At.IsZero():
		fmt.Fprintf(w, "%s the legacy sighting: key %s at %s, %d in all\n", verb, quote(s.Key),
			s.At.Local().Format(timeLayout), s.Count)
	case done.SightingKept != "":
		fmt.Fprintf(w, "kept the legacy sighting: %s\n", done.SightingKept)
	default:
		fmt.Fprintln(w, "no legacy sighting recorded")
	}
	if len(done.Forgotten) == 0 {
		fmt.Fprintln(w, "no dead registry entry")
	}
	for _, id := range done.Forgotten {
		fmt.Fprintf(w, "%s dead registry entry %s\n", verb, printable(id))
	}
	for _, l := range leftovers {
		if l.remove {
			fmt.Fprintf(w, "%s legacy key (%s key codec) %s = %s\n", verb, l.codec, quote(l.key), quoteBytes(l.info.value))
		} else {
			fmt.Fprintf(w, "kept legacy key (%s key codec) %s: %s\n", l.codec, quote(l.key), l.reason)
		}
	}
}

// cleanupJSON is `fleet cleanup --output json` (schema
// lockbridge.cleanup/v1, docs/cli.md).
type cleanupJSON struct {
	Schema     string              `json:"schema"`
	Namespace  string              `json:"namespace"`
	Server     string              `json:"server"`
	DryRun     bool                `json:"dry_run"`
	Now        *string             `json:"now"`
	Since      *string             `json:"since"`
	QuietMS    int64               `json:"quiet_ms"`
	MarginMS   int64               `json:"margin_ms"`
	Sighting   cleanupSightingJSON `json:"legacy_sighting"`
	Registry   []string            `json:"registry"`
	LegacyKeys []cleanupKeyJSON    `json:"legacy_keys"`
}

type cleanupSightingJSON struct {
	Action string  `json:"action"` // remove, removed, kept, none
	At     *string `json:"at"`
	Key    *string `json:"key"`
	Count  int64   `json:"count"`
	Reason *string `json:"reason"`
}

type cleanupKeyJSON struct {
	Name      string     `json:"name"`
	Codec     string     `json:"codec"`
	Key       bytesJSON  `json:"key"`
	Value     *bytesJSON `json:"value"`
	ExpiresAt *string    `json:"expires_at"`
	Action    string     `json:"action"` // remove, removed, kept
	Reason    *string    `json:"reason"`
}

func cleanupDoc(ns, where string, quiet, margin time.Duration, dry bool, done control.Cleanup,
	leftovers []legacyLeftover) cleanupJSON {
	doc := cleanupJSON{
		Schema: "lockbridge.cleanup/v1", Namespace: ns, Server: where, DryRun: dry,
		Now: jsonTime(done.Now), Since: jsonTime(done.Since),
		QuietMS: quiet.Milliseconds(), MarginMS: margin.Milliseconds(),
		Registry: append([]string{}, done.Forgotten...), LegacyKeys: []cleanupKeyJSON{},
	}
	act := "removed"
	if dry {
		act = "remove"
	}
	switch s := done.Sighting; {
	case !s.At.IsZero():
		doc.Sighting = cleanupSightingJSON{Action: act, At: jsonTime(s.At), Key: &s.Key, Count: s.Count}
	case done.SightingKept != "":
		r := done.SightingKept
		doc.Sighting = cleanupSightingJSON{Action: "kept", Reason: &r}
	default:
		doc.Sighting = cleanupSightingJSON{Action: "none"}
	}
	for _, l := range leftovers {
		k := cleanupKeyJSON{Name: l.name, Codec: l.codec.String(), Key: jsonBytes(l.key), ExpiresAt: jsonTime(l.expires),
			Action: "kept"}
		if l.info.isString() {
			v := jsonBytes(l.info.value)
			k.Value = &v
		}
		if l.remove {
			k.Action = act
		} else {
			r := l.reason
			k.Reason = &r
		}
		doc.LegacyKeys = append(doc.LegacyKeys, k)
	}
	return doc
}
