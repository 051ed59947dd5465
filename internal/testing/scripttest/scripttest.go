package scripttest

import (
	"bufio"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	// declRE is a declaration of the header: "-- KEYS[1]  the lock key".
	declRE = regexp.MustCompile(`^-- (KEYS|ARGV)\[(\d+)\]\s{2,}\S`)
	// repliesRE opens the header's block of reply codes.
	repliesRE = regexp.MustCompile(`^-- Replies\b`)
	// codeRE is one reply code in that block: "--   Ours   =  1  done".
	codeRE = regexp.MustCompile(`^--\s+([A-Za-z]\w*)\s*=\s*(-?\d+)\b`)
)

// Header is what a script's header comment declares.
type Header struct {
	Keys, Argv int              // how many KEYS and ARGV are declared
	Codes      map[string]int64 // the reply codes by name
}

// Parse reads the header of src, a script's body file: its leading comment
// lines. The declarations must number KEYS and ARGV from 1 without a gap.
func Parse(src string) (Header, error) {
	h := Header{Codes: map[string]int64{}}
	var keys, argv []int
	inReplies := false
	sc := bufio.NewScanner(strings.NewReader(src))
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "--") {
			break
		}
		if m := declRE.FindStringSubmatch(line); m != nil {
			n, _ := strconv.Atoi(m[2])
			if m[1] == "KEYS" {
				keys = append(keys, n)
			} else {
				argv = append(argv, n)
			}
			continue
		}
		switch {
		case repliesRE.MatchString(line):
			inReplies = true
		case strings.TrimSpace(line) == "--":
			inReplies = false
		case inReplies:
			if err := h.code(line); err != nil {
				return h, err
			}
		}
	}
	var err error
	if h.Keys, err = count("KEYS", keys); err == nil {
		h.Argv, err = count("ARGV", argv)
	}
	return h, err
}

// code records the reply code on line, if it names one.
func (h *Header) code(line string) error {
	m := codeRE.FindStringSubmatch(line)
	if m == nil {
		return nil // a continuation line
	}
	v, err := strconv.ParseInt(m[2], 10, 64)
	if err != nil {
		return fmt.Errorf("reply code %s: %w", m[1], err)
	}
	if _, dup := h.Codes[m[1]]; dup {
		return fmt.Errorf("reply code %s named twice", m[1])
	}
	h.Codes[m[1]] = v
	return nil
}

// count checks that ns is 1, 2, … n and returns n.
func count(what string, ns []int) (int, error) {
	for i, n := range ns {
		if n != i+1 {
			return 0, fmt.Errorf("%s declared as %v: want 1 to %d in order", what, ns, len(ns))
		}
	}
	return len(ns), nil
}

// Args checks one call of the script src: keys and argv, what the Go
// caller's argument struct builds, must fill exactly the positions the
// header declares, with the values want gives by position ("KEYS[1]",
// "ARGV[2]", …; compared as fmt.Sprint renders them).
func Args(t testing.TB, src string, keys []string, argv []any, want map[string]any) {
	t.Helper()
	h, err := Parse(src)
	require.NoError(t, err)
	declared := make([]string, 0, h.Keys+h.Argv)
	for i := 1; i <= h.Keys; i++ {
		declared = append(declared, fmt.Sprintf("KEYS[%d]", i))
	}
	for i := 1; i <= h.Argv; i++ {
		declared = append(declared, fmt.Sprintf("ARGV[%d]", i))
	}
	wanted := make([]string, 0, len(want))
	for k := range want {
		wanted = append(wanted, k)
	}
	slices.Sort(declared)
	slices.Sort(wanted)
	require.Equal(t, declared, wanted, "the header's KEYS and ARGV, and the test's")
	require.Len(t, keys, h.Keys, "KEYS built")
	require.Len(t, argv, h.Argv, "ARGV built")
	for i, k := range keys {
		assert.Equal(t, fmt.Sprint(want[fmt.Sprintf("KEYS[%d]", i+1)]), k, "KEYS[%d]", i+1)
	}
	for i, a := range argv {
		assert.Equal(t, fmt.Sprint(want[fmt.Sprintf("ARGV[%d]", i+1)]), fmt.Sprint(a), "ARGV[%d]", i+1)
	}
}

// Codes checks that the header of src names exactly the reply codes want
// holds (the Go constants, by their names), with the same values.
func Codes(t testing.TB, src string, want map[string]int64) {
	t.Helper()
	h, err := Parse(src)
	require.NoError(t, err)
	assert.Equal(t, want, h.Codes, "reply codes: the script's header, and Go's")
}
