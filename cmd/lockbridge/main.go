package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"golang.org/x/term"
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
	// exitInterrupted: ended by Ctrl-C (SIGINT) or SIGTERM, as a shell
	// reports a process killed by SIGINT (128+2).
	exitInterrupted = 130
)

// env is what a command sees of the process, so tests can run it in-process.
type env struct {
	// ctx ends when the process is told to stop (SIGINT, SIGTERM); nil is
	// context.Background().
	ctx            context.Context
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
	isTTY          bool
	// termSize is the terminal's columns and rows; nil or 0s when unknown.
	termSize func() (w, h int)
}

func (e *env) context() context.Context {
	if e.ctx == nil {
		return context.Background()
	}
	return e.ctx
}

func main() {
	tty := isTerminal(os.Stdout) && os.Getenv("TERM") != "dumb"
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// After the first signal the default handling returns: a second Ctrl-C
	// ends the process at once.
	go func() { <-ctx.Done(); stop() }()
	e := &env{ctx: ctx, stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv, isTTY: tty,
		termSize: func() (int, int) {
			w, h, err := term.GetSize(int(os.Stdout.Fd()))
			if err != nil {
				return 0, 0
			}
			return w, h
		}}
	code := run(e, os.Args[1:])
	stop()
	os.Exit(code)
}

// run executes one command line and returns the exit code.
func run(e *env, args []string) int {
	g := &globalFlags{}
	root := newRoot(e, g)
	root.SetArgs(args)
	err := root.ExecuteContext(e.context())
	if e.context().Err() != nil {
		fmt.Fprintln(e.stderr, "lockbridge: interrupted")
		return exitInterrupted
	}
	return exitCode(e, root, err)
}

// globalFlags are the flags every command takes, before or after its name.
type globalFlags struct {
	conn   connFlags
	output string
}

const rootLong = `lockbridge: Redis locks for fleets where Java services still lock the old way.

Connection: --redis URL or REDIS_URL (redis://, rediss://), --cluster host:port,...
Flags may come before or after the command and its arguments.

Exit codes: 0 ok, 1 error (doctor: something dangerous), 2 bad usage, 3 demo overlap,
4 unsafe step refused (fleet: the next step is not safe), 5 declined,
6 doctor could not tell, 130 interrupted (Ctrl-C).`

// helpTemplate is every command's --help: its usage line first, then what
// it does, its subcommands and its flags.
const helpTemplate = `Usage: {{if .HasParent}}{{.UseLine}}{{else}}lockbridge COMMAND [flags] [args]{{end}}

{{with (or .Long .Short)}}{{. | trimTrailingWhitespaces}}{{end}}
{{- if .HasAvailableSubCommands}}

Commands:{{range .Commands}}{{if (or .IsAvailableCommand (eq .Name "help"))}}
  {{rpad .Name .NamePadding }} {{.Short}}{{end}}{{end}}{{end}}
{{- if .HasAvailableLocalFlags}}

Flags:
{{.LocalFlags.FlagUsages | trimTrailingWhitespaces}}{{end}}
{{- if .HasAvailableInheritedFlags}}

Global flags:
{{.InheritedFlags.FlagUsages | trimTrailingWhitespaces}}{{end}}
{{- if .HasAvailableSubCommands}}

Run '{{.CommandPath}} COMMAND --help' for a command's flags.{{end}}
`

func newRoot(e *env, g *globalFlags) *cobra.Command {
	root := &cobra.Command{
		Use:     "lockbridge",
		Short:   "Redis locks for fleets where Java services still lock the old way",
		Long:    rootLong,
		Version: version(),
		// Errors are printed once, as one line, by exitCode; usage only on
		// --help.
		SilenceErrors:              true,
		SilenceUsage:               true,
		DisableSuggestions:         true, // exitCode suggests, on one line
		SuggestionsMinimumDistance: 2,
		Args:                       cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			// No command: the usage, on stderr, and a usage error.
			cmd.SetOut(e.stderr)
			_ = cmd.Usage()
			return &exitErr{exitUsage, nil}
		},
	}
	root.SetIn(e.stdin)
	root.SetOut(e.stdout)
	root.SetErr(e.stderr)
	root.SetHelpTemplate(helpTemplate)
	root.SetUsageTemplate(helpTemplate)
	root.SetVersionTemplate("lockbridge {{.Version}}\n")
	root.SetFlagErrorFunc(flagError)
	g.conn.register(root.PersistentFlags())
	root.PersistentFlags().StringVarP(&g.output, "output", "o", "text",
		"output format: text, or json (inspect, phase, fleet, doctor; schema in docs/cli.md)")
	_ = root.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"text", "json"},
		cobra.ShellCompDirectiveNoFileComp))
	root.AddCommand(
		newDemoCmd(e, g),
		newInspectCmd(e, g),
		newPhaseCmd(e, g),
		newFleetCmd(e, g),
		newUnlockCmd(e, g),
		newDoctorCmd(e, g),
	)
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() == "completion" {
			c.Short = "print a shell completion script (bash, zsh, fish, powershell)"
			// Without this, a shell cobra has no script for (tcsh) or none
			// at all prints the help and exits 0.
			c.Args = cobra.ArbitraryArgs
			c.RunE = func(_ *cobra.Command, args []string) error {
				if len(args) == 0 {
					return usageErrorf("completion: want a shell: bash, zsh, fish or powershell")
				}
				return usageErrorf("completion: no script for shell %q: want bash, zsh, fish or powershell", args[0])
			}
		}
	}
	return root
}

// flagError is a usage error for a flag c does not take; when it is one of
// c's subcommands' flags, it says to give it after the subcommand (cobra
// reads the flags before a subcommand with the parent's, and takes the
// subcommand for the value of a flag it does not know).
func flagError(c *cobra.Command, err error) error {
	name, ok := strings.CutPrefix(err.Error(), "unknown flag: --")
	if ok {
		var owners []string
		for _, sub := range c.Commands() {
			if f := sub.Flags().Lookup(name); f != nil && !f.Hidden {
				owners = append(owners, sub.Name())
			}
		}
		if len(owners) > 0 {
			return usageErrorf("%s: --%s is a flag of %s %s: give it after the subcommand (see '%s %s --help')",
				c.Name(), name, c.Name(), strings.Join(owners, ", "), c.CommandPath(), owners[0])
		}
	}
	return usageErrorf("%s: %v (see '%s --help')", c.Name(), err, c.CommandPath())
}

// Errors that choose an exit code. An exitErr without err prints nothing.
type exitErr struct {
	code int
	err  error
}

func (e *exitErr) Error() string {
	if e.err == nil {
		return ""
	}
	return e.err.Error()
}
func (e *exitErr) Unwrap() error { return e.err }

func usageErrorf(format string, a ...any) error {
	return &exitErr{exitUsage, fmt.Errorf(format, a...)}
}

// exitCode prints err, if any, as one line on stderr and returns the exit
// code it stands for.
func exitCode(e *env, root *cobra.Command, err error) int {
	if err == nil {
		return exitOK
	}
	code := exitError
	var xe *exitErr
	switch {
	case errors.As(err, &xe):
		code = xe.code
		if xe.err == nil {
			return code
		}
	case strings.HasPrefix(err.Error(), "unknown command "):
		// cobra's own: an unknown command or subcommand.
		code = exitUsage
		err = unknownCommand(root, err)
	case strings.HasPrefix(err.Error(), "invalid argument ") || strings.HasPrefix(err.Error(), "unknown flag") ||
		strings.Contains(err.Error(), "accepts ") || strings.HasPrefix(err.Error(), "unknown shorthand flag"):
		code = exitUsage
	}
	fmt.Fprintf(e.stderr, "lockbridge: %s\n", message(err))
	return code
}

// unknownCommand rewrites cobra's unknown-command error as one line with a
// suggestion.
func unknownCommand(root *cobra.Command, err error) error {
	msg := err.Error()
	var name string
	if _, err := fmt.Sscanf(msg, "unknown command %q", &name); err != nil {
		return err
	}
	hint := "run 'lockbridge --help' for the commands"
	if s := root.SuggestionsFor(name); len(s) > 0 {
		hint = "did you mean " + strings.Join(s, " or ") + "? " + hint
	}
	return fmt.Errorf("unknown command %q (%s)", name, hint)
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

func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
