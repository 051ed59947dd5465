package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/driver/keyslot"
	"github.com/lockbridge/lockbridge/internal/protocol/legacyproto"
	"github.com/lockbridge/lockbridge/legacy"
	"github.com/lockbridge/lockbridge/migrate"
	"github.com/lockbridge/lockbridge/migrate/control"
	"github.com/lockbridge/lockbridge/modern"
	"github.com/spf13/cobra"
)

const inspectSummary = `Show what a lock name holds, without changing anything:

  - the legacy key, as each key codec encodes KEY (raw bytes, or the
    JDK-serialized String of Spring's default RedisTemplate): its bytes, and the
    value decoded under every legacy value codec that parses it, with the expiry
    as a local time and the time left (or "expired"); a value no codec parses is
    shown as foreign, safely quoted;
  - a modern lock on KEY itself (token and PTTL) and its fence counter;
  - the derived modern key migrate uses ({KEY}:modern): token, PTTL, fence;
  - the phase of the namespace, when one is given.`

func newInspectCmd(e *env, g *globalFlags) *cobra.Command {
	var kc string
	cmd := &cobra.Command{
		Use:   "inspect KEY",
		Short: "decode what a lock key holds: legacy value, modern token and TTL, fence, phase",
		Long:  inspectSummary,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 || args[0] == "" {
				return usageErrorf("inspect takes one non-empty KEY (see 'lockbridge inspect --help')")
			}
			asJSON, err := g.wantJSON("inspect", true)
			if err != nil {
				return err
			}
			return runInspect(cmd.Context(), e, &g.conn, args[0], kc, asJSON)
		},
	}
	cmd.Flags().StringVar(&kc, "key-codec", "auto",
		"how the Java services encode KEY: raw, jdk-string (or java-string), or auto: try both and show which exists")
	_ = cmd.RegisterFlagCompletionFunc("key-codec",
		cobra.FixedCompletions([]string{"auto", "raw", "jdk-string"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// runInspect is `lockbridge inspect KEY`: for each key codec, the legacy key
// and its value, the derived modern key and its fence; then the namespace's
// phase when one is named.
func runInspect(ctx context.Context, e *env, cf *connFlags, name, kcFlag string, asJSON bool) error {
	keys, err := lockKeys(name, kcFlag)
	if err != nil {
		return err
	}
	c, closeFn, err := cf.dial(ctx, e)
	if err != nil {
		return err
	}
	defer closeFn()
	cctx, cancel := cf.callCtx(ctx)
	defer cancel()
	if asJSON {
		doc, err := inspectDoc(cctx, e, cf, c, name, keys)
		if err != nil {
			return err
		}
		return writeJSON(e.stdout, doc)
	}

	now := time.Now()
	w := e.stdout
	fmt.Fprintf(w, "lock name %s\n", quote(name))
	found := false
	for _, k := range keys {
		kfound, err := printCodecKey(cctx, w, c, k, len(keys) > 1, now)
		if err != nil {
			return err
		}
		found = found || kfound
	}
	if !found && len(keys) > 1 {
		fmt.Fprintln(w, "\nnothing is stored for this lock name under either key codec")
	}
	if ns := cf.nsGiven(e); ns != "" {
		return printPhase(cctx, w, c, ns)
	}
	return nil
}

// printCodecKey prints what the lock name holds under one key codec: the
// legacy key and its value, the modern key, its token and its fence. When
// several codecs are shown, a codec with neither key is one line. It
// reports whether either key exists.
func printCodecKey(ctx context.Context, w io.Writer, c driver.Client, k codecKey, several bool,
	now time.Time) (bool, error) {
	lk, err := readKey(ctx, c, k.key)
	if err != nil {
		return false, err
	}
	var mv keyInfo
	if k.modern != "" {
		if mv, err = readKey(ctx, c, k.modern); err != nil {
			return false, err
		}
	}
	if !lk.exists() && !mv.exists() && several {
		fmt.Fprintf(w, "\nlegacy key %s (%s key codec): absent, and no modern key\n", quote(k.key), k.codec)
		return false, nil
	}
	fmt.Fprintf(w, "\nlegacy key %s (%s key codec): %s\n", quote(k.key), k.codec, lk.header())
	if lk.isString() {
		if err := describeValue(ctx, w, c, k.key, lk, now); err != nil {
			return false, err
		}
	}
	if k.modern == "" {
		fmt.Fprintln(w, "\nmodern key: none (no key in the legacy key's hash slot; migrate needs WithModernKey)")
		return lk.exists() || mv.exists(), nil
	}
	fmt.Fprintf(w, "\nmodern key %s (migrate): %s\n", quote(k.modern), mv.header())
	if mv.isString() {
		fmt.Fprintf(w, "  token  %s\n", quoteBytes(mv.value))
	}
	if err := describeFence(ctx, w, c, k.modern); err != nil {
		return false, err
	}
	return lk.exists() || mv.exists(), nil
}

// printPhase prints the phase of namespace ns, since when, and how many
// clients are live.
func printPhase(ctx context.Context, w io.Writer, c driver.Client, ns string) error {
	ctl, err := control.New(c, ns)
	if err != nil {
		return usageErrorf("%v", err)
	}
	st, err := ctl.Status(ctx)
	if err != nil {
		return err
	}
	phase := st.Phase.String()
	if st.PhaseProblem != nil {
		phase = fmt.Sprintf("UNKNOWN (%s)", st.PhaseProblem.Reason)
	}
	since := ""
	if !st.Since.IsZero() {
		since = fmt.Sprintf(" since %s (%s ago)", st.Since.Local().Format(timeLayout), ago(st.Now.Sub(st.Since)))
	}
	live := 0
	for _, n := range st.Live {
		live += n
	}
	fmt.Fprintf(w, "\nnamespace %s: phase %s%s, %d live clients\n", ns, phase, since, live)
	return nil
}

// lockKeys returns the Redis keys of the lock name under the --key-codec
// flag's codecs ("auto": every codec, skipping those that cannot encode it).
func lockKeys(name, flag string) ([]codecKey, error) {
	codecs, err := keyCodecs(flag)
	if err != nil {
		return nil, err
	}
	return encodeKeys(name, codecs, flag != "auto")
}

// keyCodecs parses --key-codec.
func keyCodecs(s string) ([]legacy.KeyCodec, error) {
	switch s {
	case "auto":
		return []legacy.KeyCodec{legacy.KeyRaw, legacy.KeyJavaString}, nil
	case "java-string":
		return []legacy.KeyCodec{legacy.KeyJavaString}, nil
	}
	kc, err := legacyproto.ParseKeyCodec(s)
	if err != nil {
		return nil, usageErrorf("bad --key-codec %q: want raw, jdk-string (java-string) or auto", s)
	}
	return []legacy.KeyCodec{kc}, nil
}

type codecKey struct {
	codec       legacy.KeyCodec
	key, modern string // modern is "" when no key shares the slot
}

// encodeKeys encodes the lock name under each codec; strict says a codec
// that cannot encode it is an error rather than skipped.
func encodeKeys(name string, codecs []legacy.KeyCodec, strict bool) ([]codecKey, error) {
	var out []codecKey
	for _, kc := range codecs {
		p, err := legacyproto.NewProfile(legacy.WithKeyCodec(kc))
		if err != nil {
			return nil, err
		}
		k, err := p.EncodeKey(name)
		if err != nil {
			if strict || len(codecs) == 1 {
				return nil, usageErrorf("KEY %s cannot be encoded with the %s key codec: %s", quote(name), kc,
					strings.TrimPrefix(err.Error(), "legacy: "))
			}
			continue
		}
		mk, _ := migrate.DeriveModernKey(k)
		out = append(out, codecKey{codec: kc, key: k, modern: mk})
	}
	if len(out) == 0 {
		return nil, usageErrorf("KEY %s cannot be encoded with any key codec", quote(name))
	}
	return out, nil
}

// keyInfo is what a key holds.
type keyInfo struct {
	typ   string // "none", "string", "hash", …
	value string // for a string
	pttl  int64  // ms; -1 no expiry, -2 no key
}

func (k keyInfo) exists() bool   { return k.typ != "" && k.typ != "none" }
func (k keyInfo) isString() bool { return k.typ == "string" }

func (k keyInfo) header() string {
	switch {
	case !k.exists():
		return "absent"
	case !k.isString():
		return fmt.Sprintf("a %s, not a lock", k.typ)
	}
	return fmt.Sprintf("%d bytes, %s", len(k.value), ttlText(k.pttl))
}

func ttlText(pttl int64) string {
	if pttl < 0 {
		return "no TTL"
	}
	return fmt.Sprintf("PTTL %v", time.Duration(pttl)*time.Millisecond)
}

// readKey reads a key's type, value and PTTL.
func readKey(ctx context.Context, c driver.Client, key string) (keyInfo, error) {
	r, err := c.Do(ctx, "TYPE", key)
	if err != nil {
		return keyInfo{}, fmt.Errorf("TYPE %s: %w", quote(key), err)
	}
	k := keyInfo{typ: fmt.Sprint(r), pttl: -2}
	if !k.isString() {
		return k, nil
	}
	v, ok, err := c.Get(ctx, key)
	if err != nil {
		return k, fmt.Errorf("GET %s: %w", quote(key), err)
	}
	if !ok { // gone meanwhile
		return keyInfo{typ: "none", pttl: -2}, nil
	}
	k.value = v
	r, err = c.Do(ctx, "PTTL", key)
	if err != nil {
		return k, fmt.Errorf("PTTL %s: %w", quote(key), err)
	}
	k.pttl, _ = r.(int64)
	return k, nil
}

const timeLayout = "2006-01-02 15:04:05.000 MST"

// describeValue decodes a legacy key's value under every value codec.
func describeValue(ctx context.Context, w io.Writer, c driver.Client, key string, k keyInfo, now time.Time) error {
	fmt.Fprintf(w, "  bytes        %s\n", quoteBytes(k.value))
	parsed := 0
	for _, vc := range legacy.ValueCodecs() {
		v, err := vc.Decode(k.value)
		if err != nil {
			fmt.Fprintf(w, "  %-12s does not parse\n", vc)
			continue
		}
		parsed++
		fmt.Fprintf(w, "  %-12s %s\n", vc, expiryText(v, now))
	}
	if parsed == 0 {
		if k.pttl > 0 {
			fmt.Fprintf(w, "  no legacy codec parses it; with its TTL it is a modern lock: token %s, PTTL %v\n",
				quoteBytes(k.value), time.Duration(k.pttl)*time.Millisecond)
		} else {
			fmt.Fprintln(w, "  FOREIGN: no legacy codec parses it; legacy lockers treat it as held and never take it over")
		}
	}
	return describeFence(ctx, w, c, key)
}

// describeFence shows the fence counter of a modern lock on key, if there
// is one.
func describeFence(ctx context.Context, w io.Writer, c driver.Client, key string) error {
	fk, v, ok, err := readFence(ctx, c, key)
	switch {
	case err == errFenceNotString:
		fmt.Fprintf(w, "  fence  %s is not a string\n", quote(fk))
	case err != nil:
		return err
	case ok:
		fmt.Fprintf(w, "  fence  %s = %s (the last fencing token handed out)\n", quote(fk), quoteBytes(v))
	}
	return nil
}

var errFenceNotString = errors.New("fence key is not a string")

// readFence reads the fence counter of a modern lock on key: its key fk
// (empty when key has no companion), its value and whether it exists;
// errFenceNotString when it holds something else.
func readFence(ctx context.Context, c driver.Client, key string) (fk, v string, ok bool, err error) {
	fk, ok = keyslot.Companion(key, modern.FenceSuffix)
	if !ok {
		return "", "", false, nil
	}
	v, ok, err = c.Get(ctx, fk)
	if err != nil {
		if driver.HasPrefix(err, "WRONGTYPE") {
			return fk, "", false, errFenceNotString
		}
		return fk, "", false, fmt.Errorf("GET %s: %w", quote(fk), err)
	}
	return fk, v, ok, nil
}

// expiry is a decoded legacy value read as an expiry: in milliseconds, or
// in seconds for values too small to be milliseconds (the redis.io
// recipe's unit). Expired means stored < now, strictly, in the unit; a
// value in seconds lives through its whole second.
type expiry struct {
	at      time.Time
	unit    string // "ms" or "s"
	expired bool
	left    time.Duration // when not expired
	ago     time.Duration // when expired
}

func decodeExpiry(v int64, now time.Time) expiry {
	x := expiry{unit: "ms"}
	var nowU int64
	if v < 100_000_000_000 && v > -100_000_000_000 { // before 1973 in ms: Unix seconds
		x.at, x.unit, nowU = time.Unix(v, 0), "s", now.Unix()
	} else {
		x.at, nowU = time.UnixMilli(v), now.UnixMilli()
	}
	if v < nowU {
		x.expired, x.ago = true, now.Sub(x.at)
		return x
	}
	x.left = x.at.Sub(now)
	if x.unit == "s" {
		x.left = x.at.Add(time.Second).Sub(now)
	}
	return x
}

// expiryText shows a decoded expiry.
func expiryText(v int64, now time.Time) string {
	x := decodeExpiry(v, now)
	head := fmt.Sprintf("%d (%s) = %s: ", v, x.unit, x.at.Local().Format(timeLayout))
	if x.expired {
		return head + "expired (" + ago(x.ago) + " ago)"
	}
	return head + "live, " + x.left.Round(time.Millisecond).String() + " left"
}

// ago shows a duration coarsely.
func ago(d time.Duration) string {
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Hour:
		return d.Round(100 * time.Millisecond).String()
	case d < 72*time.Hour:
		return d.Round(time.Minute).String()
	}
	return fmt.Sprintf("%.0f days", d.Hours()/24)
}

// maxShown is how many bytes of a key or value are shown.
const maxShown = 160

// quote shows a name or key safely: Go-quoted (invalid UTF-8 and control
// characters escaped), truncated.
func quote(s string) string { return quoteWith(strconv.Quote, s) }

// quoteBytes shows a stored value safely, byte for byte: printable ASCII
// as it is, every other byte as \xNN; truncated.
func quoteBytes(s string) string { return quoteWith(byteQuote, s) }

func byteQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c >= 0x20 && c < 0x7f:
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "\\x%02x", c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func quoteWith(q func(string) string, s string) string {
	if len(s) <= maxShown {
		return q(s)
	}
	return fmt.Sprintf("%s… (%d bytes)", q(s[:maxShown]), len(s))
}
