package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// Exit codes.
const (
	exitOK       = 0
	exitError    = 1
	exitUsage    = 2
	exitOverlap  = 3
	exitUnsafe   = 4
	exitDeclined = 5
	// exitUndetermined: doctor found nothing dangerous but could not tell
	// everything.
	exitUndetermined = 6
)

// env is what a command sees of the process, so tests can run it in-process.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
	isTTY          bool
}

type command struct {
	name, args, summary string
	run                 func(e *env, args []string) error
}

func commands() []command {
	return []command{
		{"demo", "[flags]", "run a mixed Java/Go fleet migrating live (embedded Redis unless --redis)", runDemo},
		{"inspect", "[flags] KEY", "decode what a lock key holds: legacy value, modern token and TTL, fence, phase", runInspect},
		{"phase", "get|set [flags] [PHASE]", "print the namespace's phase, or move it one step", runPhase},
		{"fleet", "[flags]", "list the fleet's clients, their phases and the last legacy sighting", runFleet},
		{"unlock", "[flags] --force KEY", "delete a lock (legacy and modern keys) by hand", runUnlock},
		{"doctor", "[flags]", "check a Redis against lockbridge's failure model: what is dangerous", runDoctor},
	}
}

func main() {
	tty := isTerminal(os.Stdout) && os.Getenv("TERM") != "dumb"
	e := &env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv, isTTY: tty}
	os.Exit(run(e, os.Args[1:]))
}

// run executes one command line and returns the exit code.
func run(e *env, args []string) int {
	if len(args) == 0 {
		usage(e.stderr)
		return exitUsage
	}
	switch args[0] {
	case "-h", "-help", "--help":
		usage(e.stdout)
		return exitOK
	case "help":
		if len(args) == 1 {
			usage(e.stdout)
			return exitOK
		}
		args = []string{args[1], "--help"}
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return exitCode(e, c.run(e, args[1:]))
		}
	}
	fmt.Fprintf(e.stderr, "lockbridge: unknown command %q (run 'lockbridge --help' for the commands)\n", args[0])
	return exitUsage
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "lockbridge: Redis locks for fleets where Java services still lock the old way.")
	fmt.Fprintln(w, "\nUsage:\n  lockbridge COMMAND [flags] [args]\n\nCommands:")
	cs := commands()
	sort.Slice(cs, func(i, j int) bool { return cs[i].name < cs[j].name })
	for _, c := range cs {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun 'lockbridge COMMAND --help' for a command's flags.")
	fmt.Fprintln(w, "Connection: --redis URL or REDIS_URL (redis://, rediss://), --cluster host:port,...")
	fmt.Fprintln(w, "Exit codes: 0 ok, 1 error (doctor: something dangerous), 2 bad usage, 3 demo overlap,\n4 unsafe step refused, 5 declined, 6 doctor could not tell.")
}

// Errors that choose an exit code.
type exitErr struct {
	code int
	err  error
}

func (e *exitErr) Error() string { return e.err.Error() }
func (e *exitErr) Unwrap() error { return e.err }

func usageErrorf(format string, a ...any) error {
	return &exitErr{exitUsage, fmt.Errorf(format, a...)}
}

func exitCode(e *env, err error) int {
	if err == nil {
		return exitOK
	}
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	code := exitError
	var xe *exitErr
	if errors.As(err, &xe) {
		code = xe.code
	}
	fmt.Fprintf(e.stderr, "lockbridge: %s\n", message(err))
	return code
}

// flagSet is a command's flags and its help text.
type flagSet struct {
	*flag.FlagSet
	help func()
}

// message is err's text for the user: without the package prefixes of a
// library error about an invalid argument.
func message(err error) string {
	msg := strings.ReplaceAll(err.Error(), "lockbridge: invalid argument: ", "")
	for trimmed := true; trimmed; {
		trimmed = false
		for _, p := range []string{"lockbridge: ", "migrate: ", "legacy: ", "fleetsim: "} {
			if strings.HasPrefix(msg, p) {
				msg, trimmed = msg[len(p):], true
			}
		}
	}
	return msg
}

// newFlags returns the flag set of a command. --help prints the usage on
// stdout; a bad flag prints nothing but the one-line error.
func newFlags(e *env, name, args, summary string) *flagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {} // the flag package calls it on errors too
	help := func() {
		w := e.stdout
		fmt.Fprintf(w, "Usage: lockbridge %s %s\n\n%s\n\nFlags:\n", name, args, summary)
		fs.SetOutput(w)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
	return &flagSet{FlagSet: fs, help: help}
}

// parse parses flags, which may come before or after the positional
// arguments ("inspect KEY --redis URL"); everything after "--" is
// positional. --help prints the usage and ends the command with exit 0;
// a bad flag is a usage error.
func parse(fs *flagSet, args []string) error {
	var pos, tail []string
	for i, a := range args {
		if a == "--" {
			args, tail = args[:i], args[i+1:]
			break
		}
	}
	rest := args
	for {
		if err := fs.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fs.help()
				return flag.ErrHelp
			}
			return usageErrorf("%s: %v (see 'lockbridge %s --help')", fs.Name(), err, fs.Name())
		}
		if fs.NArg() == 0 {
			break
		}
		pos = append(pos, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	return fs.Parse(append(append([]string{"--"}, pos...), tail...))
}

func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
