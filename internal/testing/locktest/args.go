package locktest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/internal/runtime/check"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Bad forms of script arguments, by the form the script expects: what a
// Java serializer, a typo or another protocol version sends instead. Each
// script must refuse every one of them with an error reply
// (internal/protocol/luafrag/args.lua).
var (
	// BadInts are not a decimal integer in its exact form.
	BadInts = []string{`"5"`, " 5", "5 ", "+5", "05", "5.0", "5e0", "0x5", "true", "", "-0",
		"99999999999999999", "9007199254740993", "5\n", "５"}
	// BadFlags are not '0' or '1'.
	BadFlags = []string{`"1"`, "true", "1 ", " 1", "2", "", "01", "yes", "-1"}
	// BadCodecs are not a legacy value codec id.
	BadCodecs = []string{"Decimal", "decimal ", `"decimal"`, "", "xml"}
	// BadUnits are not 'ms' or 's'.
	BadUnits = []string{"MS", "ms ", "sec", "", `"ms"`}
	// BadDecimalValues do not decode as a legacy 'decimal' value.
	BadDecimalValues = []string{"abc", " 1700000000001", `"1700000000001"`, "", "1.7E12", "1700000000001 "}
	// BadPublish are not 'PUBLISH', 'SPUBLISH' or ''.
	BadPublish = []string{"publish", "PUBLISH ", `"PUBLISH"`, "PUB"}
)

// BadOwnerArgs are the bad forms of the six owner-window arguments
// (legacy_owner_args: codec, unit, W, lease, now, margin) when they start
// at ARGV[first+1], keyed for StrictArgs.
func BadOwnerArgs(first int) map[int][]string {
	return map[int][]string{
		first: BadCodecs, first + 1: BadUnits, first + 2: BadInts,
		first + 3: append([]string{"0", "-1"}, BadInts...), first + 4: BadInts,
		first + 5: append([]string{"-1"}, BadInts...),
	}
}

// StrictArgs checks that script refuses every bad form of its arguments
// before it touches a key. good are valid arguments that make the script
// act on keys (the control); bad maps an argument's index in good (0 for
// ARGV[1]) to the forms to try there. Each attempt sends good with that one
// argument replaced, then good with its last argument dropped, then with
// one argument more; each must get an error reply that names a bad
// argument, and leave every key of watch as it was (its DUMP, and no PTTL
// added or extended). Last it sends good and returns the reply, which the
// caller checks to show the script acts on these keys.
func StrictArgs(t *testing.T, c driver.Client, script *driver.Script, keys, good []string, bad map[int][]string,
	watch []string) any {
	t.Helper()
	ac := &argsCheck{t: t, c: c, script: script, keys: keys, watch: watch}
	ac.before = ac.snap()
	tried := 0
	for i, forms := range bad {
		require.Less(t, i, len(good))
		for _, f := range forms {
			args := append([]string{}, good...)
			args[i] = f
			ac.try(fmt.Sprintf("ARGV[%d]=%q", i+1, f), args)
			tried++
		}
	}
	require.Positive(t, tried)
	ac.try("one argument missing", good[:len(good)-1])
	ac.try("one argument more", append(append([]string{}, good...), "0"))

	r, err := c.Eval(context.Background(), script, keys, anys(good)...)
	require.NoError(t, err, "%s: the good arguments", script.Name())
	return r
}

// argsCheck is one StrictArgs check: the script, its keys, and the watched
// keys as they were before.
type argsCheck struct {
	t      *testing.T
	c      driver.Client
	script *driver.Script
	keys   []string
	watch  []string
	before []keyState
}

// keyState is a watched key's DUMP and PTTL.
type keyState struct {
	dump any
	pttl int64
}

// snap reads the watched keys.
func (ac *argsCheck) snap() []keyState {
	ctx := context.Background()
	s := make([]keyState, len(ac.watch))
	for i, k := range ac.watch {
		d, err := ac.c.Do(ctx, "DUMP", k)
		require.NoError(ac.t, err)
		p, err := ac.c.Do(ctx, "PTTL", k)
		require.NoError(ac.t, err)
		s[i] = keyState{d, p.(int64)}
	}
	return s
}

// try sends the script with args: it must get an error reply naming a bad
// argument and leave every watched key as it was.
func (ac *argsCheck) try(what string, args []string) {
	t, name := ac.t, ac.script.Name()
	t.Helper()
	_, err := ac.c.Eval(context.Background(), ac.script, ac.keys, anys(args)...)
	if !assert.Error(t, err, "%s %s: accepted", name, what) {
		return
	}
	assert.Contains(t, err.Error(), "lockbridge: bad argument", "%s %s", name, what)
	after := ac.snap()
	for i, k := range ac.watch {
		assert.Equal(t, ac.before[i].dump, after[i].dump, "%s %s: key %q changed", name, what, k)
		switch {
		case ac.before[i].pttl < 0:
			assert.Equal(t, ac.before[i].pttl, after[i].pttl, "%s %s: key %q TTL changed", name, what, k)
		default:
			assert.LessOrEqual(t, after[i].pttl, ac.before[i].pttl, "%s %s: key %q TTL extended", name, what, k)
		}
	}
}

// anys is ss as script arguments.
func anys(ss []string) []any {
	a := make([]any, len(ss))
	for i, v := range ss {
		a[i] = v
	}
	return a
}

// BadCall is a key and ttl every locker refuses with lockbridge.ErrInvalid.
type BadCall struct {
	Name string
	Key  string
	TTL  time.Duration
}

// BadKeysAndTTLs are the bad keys and ttls every locker refuses, before
// sending anything: an empty or too long key, a ttl below a millisecond.
func BadKeysAndTTLs() []BadCall {
	return []BadCall{
		{"empty key", "", time.Second},
		{"key too long", strings.Repeat("k", check.MaxKeyLen+1), time.Second},
		{"zero ttl", "k", 0},
		{"negative ttl", "k", -time.Second},
		{"ttl below a millisecond", "k", 999 * time.Microsecond},
	}
}
