package main

import (
	"bufio"
	"context"
	_ "embed"
	"fmt"
	"io"
	"strings"

	"github.com/lockbridge/lockbridge/driver"
	"github.com/spf13/cobra"
)

const unlockSummary = `Delete a lock by hand: the legacy key (as each key codec encodes KEY, or the one
--key-codec names) and the derived modern key, whichever exist. Whoever holds
the lock is not told: use it only for a lock you know is stuck.

It shows what it will delete and asks for confirmation (unless --yes); a key
that changed since it was shown is left alone. Fence counters are kept:
deleting one would restart its fencing sequence.

Exit codes: 0 deleted (or nothing to delete), 5 declined, 1 an error or a key
changed meanwhile, 2 bad usage.`

// delIfSame deletes KEYS[1] only if it still holds ARGV[1].
var delIfSame = driver.NewScript("cmd/lockbridge/del_if_same.lua", delIfSameSrc)

//go:embed del_if_same.lua
var delIfSameSrc string

func newUnlockCmd(e *env, g *globalFlags) *cobra.Command {
	var force, yes bool
	var kc string
	cmd := &cobra.Command{
		Use:   "unlock --force KEY",
		Short: "delete a lock (legacy and modern keys) by hand",
		Long:  unlockSummary,
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, err := g.wantJSON("unlock", false); err != nil {
				return err
			}
			if len(args) != 1 || args[0] == "" {
				return usageErrorf("unlock takes one non-empty KEY (see 'lockbridge unlock --help')")
			}
			if !force {
				return usageErrorf("unlock deletes a lock another process may hold: add --force (it still asks before " +
					"deleting, unless --yes)")
			}
			return runUnlock(cmd.Context(), e, &g.conn, args[0], kc, yes)
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "required: deleting a lock may let a second holder in")
	cmd.Flags().BoolVar(&yes, "yes", false, "do not ask for confirmation")
	cmd.Flags().StringVar(&kc, "key-codec", "auto",
		"how the Java services encode KEY: raw, jdk-string (or java-string), or auto: both")
	return cmd
}

// unlockTarget is a key unlock deletes: which key it is, and what it held
// when read.
type unlockTarget struct {
	what, key string
	info      keyInfo
}

// runUnlock is `lockbridge unlock --force KEY`: it reads the keys the lock
// name holds, shows them, asks (unless yes), and deletes each one that
// still holds what was shown.
func runUnlock(ctx context.Context, e *env, cf *connFlags, name, kcFlag string, yes bool) error {
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
	targets, err := unlockTargets(cctx, c, keys)
	if err != nil {
		return err
	}
	if len(targets) == 0 {
		fmt.Fprintf(e.stdout, "nothing to unlock: no key holds lock name %s\n", quote(name))
		return nil
	}
	fmt.Fprintf(e.stdout, "lock name %s: will delete\n", quote(name))
	for _, t := range targets {
		fmt.Fprintf(e.stdout, "  %s %s = %s (%s)\n", t.what, quote(t.key), quoteBytes(t.info.value), ttlText(t.info.pttl))
	}
	if !yes {
		fmt.Fprintf(e.stdout, "Delete %d key(s)? Anyone holding the lock will not know. [y/N] ", len(targets))
		line, err := readAnswer(ctx, e)
		if err != nil {
			return err
		}
		if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
			fmt.Fprintln(e.stdout)
			return &exitErr{exitDeclined, fmt.Errorf("unlock declined: nothing deleted")}
		}
	}
	dctx, cancel2 := cf.callCtx(ctx)
	defer cancel2()
	return deleteTargets(dctx, e.stdout, c, targets)
}

// unlockTargets reads each key of the lock name once (legacy under every
// codec, modern): those that exist are the targets; a key that is not a
// string is not a lock, and refused.
func unlockTargets(ctx context.Context, c driver.Client, keys []codecKey) ([]unlockTarget, error) {
	var targets []unlockTarget
	seen := map[string]bool{}
	for _, k := range keys {
		for _, t := range []unlockTarget{
			{what: fmt.Sprintf("legacy key (%s key codec)", k.codec), key: k.key},
			{what: "modern key", key: k.modern},
		} {
			if t.key == "" || seen[t.key] {
				continue
			}
			seen[t.key] = true
			info, err := readKey(ctx, c, t.key)
			if err != nil {
				return nil, err
			}
			if !info.exists() {
				continue
			}
			if !info.isString() {
				return nil, fmt.Errorf("%s %s is a %s, not a lock: not deleting it", t.what, quote(t.key), info.typ)
			}
			t.info = info
			targets = append(targets, t)
		}
	}
	return targets, nil
}

// deleteTargets deletes each target that still holds the value shown, and
// fails when one changed meanwhile (it is left alone).
func deleteTargets(ctx context.Context, w io.Writer, c driver.Client, targets []unlockTarget) error {
	changed := 0
	for _, t := range targets {
		r, err := c.Eval(ctx, delIfSame, []string{t.key}, t.info.value)
		if err != nil {
			return fmt.Errorf("delete %s: %w", quote(t.key), err)
		}
		if r == int64(1) {
			fmt.Fprintf(w, "deleted %s %s\n", t.what, quote(t.key))
		} else {
			changed++
			fmt.Fprintf(w, "left %s %s alone: it changed since it was shown\n", t.what, quote(t.key))
		}
	}
	if changed > 0 {
		return fmt.Errorf("unlock: %d key(s) changed meanwhile and were left alone; run it again", changed)
	}
	return nil
}

// readAnswer reads one line of stdin, or returns ctx's error when it ends
// first (Ctrl-C at the prompt: the process then exits, and the read with it).
func readAnswer(ctx context.Context, e *env) (string, error) {
	got := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(e.stdin).ReadString('\n')
		got <- line
	}()
	select {
	case line := <-got:
		return line, nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}
