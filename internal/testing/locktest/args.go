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
func StrictArgs(t *testing.T, c driver.Client, script *driver.Script, keys, good []string, bad map[int][]string, watch []string) any {
	t.Helper()
	ctx := context.Background()
	type state struct {
		dump any
		pttl int64
	}
	snap := func() []state {
		s := make([]state, len(watch))
		for i, k := range watch {
			d, err := c.Do(ctx, "DUMP", k)
			require.NoError(t, err)
			p, err := c.Do(ctx, "PTTL", k)
			require.NoError(t, err)
			s[i] = state{d, p.(int64)}
		}
		return s
	}
	before := snap()
	try := func(what string, args []string) {
		t.Helper()
		a := make([]any, len(args))
		for i, v := range args {
			a[i] = v
		}
		_, err := c.Eval(ctx, script, keys, a...)
		if !assert.Error(t, err, "%s %s: accepted", script.Name(), what) {
			return
		}
		assert.Contains(t, err.Error(), "lockbridge: bad argument", "%s %s", script.Name(), what)
		after := snap()
		for i, k := range watch {
			assert.Equal(t, before[i].dump, after[i].dump, "%s %s: key %q changed", script.Name(), what, k)
			switch {
			case before[i].pttl < 0:
				assert.Equal(t, before[i].pttl, after[i].pttl, "%s %s: key %q TTL changed", script.Name(), what, k)
			default:
				assert.LessOrEqual(t, after[i].pttl, before[i].pttl, "%s %s: key %q TTL extended", script.Name(), what, k)
			}
		}
	}
	tried := 0
	for i, forms := range bad {
		require.Less(t, i, len(good))
		for _, f := range forms {
			args := append([]string{}, good...)
			args[i] = f
			try(fmt.Sprintf("ARGV[%d]=%q", i+1, f), args)
			tried++
		}
	}
	require.Positive(t, tried)
	try("one argument missing", good[:len(good)-1])
	try("one argument more", append(append([]string{}, good...), "0"))

	a := make([]any, len(good))
	for i, v := range good {
		a[i] = v
	}
	r, err := c.Eval(ctx, script, keys, a...)
	require.NoError(t, err, "%s: the good arguments", script.Name())
	return r
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
