package main

import (
	"bytes"
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lockbridge/lockbridge/cmd/lockbridge/internal/fleetsim"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/internal/testing/redistest"
	"github.com/lockbridge/lockbridge/migrate"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// checkCleanDemo checks the output of a demo that must end well: zero
// overlaps, every phase reached with the rollback, the controller's
// refusal, and the Java workers labelled and acquiring.
func checkCleanDemo(t *testing.T, r result) {
	t.Helper()
	require.Equal(t, 0, r.code, "stderr: %s\nstdout: %s", r.stderr, r.stdout)
	assert.Empty(t, r.stderr)
	out := r.stdout
	assert.Contains(t, out, "overlaps: 0 — no two holders ever held a lock at once.")
	assert.Contains(t, out,
		"phases reached: legacy → dual-write → dual-read → modern → dual-read (the last step a rollback)")
	assert.Regexp(t, `controller refusals: [1-9]`, out)
	assert.Contains(t, out, "REFUSED  controller refused dual-write → dual-read (the Go workers still run legacy)")
	assert.Contains(t, out, "Java workers (the Java seed algorithm)")
	assert.Contains(t, out, "RETIRE   retired 3 Java workers")
	// Redeployed one at a time, in order.
	for _, step := range []string{"legacy → dual-write", "dual-write → dual-read", "dual-read → modern",
		"modern → dual-read"} {
		for i := 1; i <= 4; i++ {
			assert.Contains(t, out, "redeployed: "+step+" ("+strconv.Itoa(i)+"/4)")
		}
	}
	// The summary counts acquisitions of each kind and in every phase.
	for _, row := range []string{"java (Java seed algorithm)", "go (migrate.Locker)", "go in legacy", "go in dual-write",
		"go in dual-read", "go in modern"} {
		m := regexp.MustCompile(regexp.QuoteMeta(row) + `\s+(\d+)\s+(\d+)\s+(\d+)\n`).FindStringSubmatch(out)
		require.NotNil(t, m, "summary row %q in:\n%s", row, out)
		n, _ := strconv.Atoi(m[1])
		assert.Positive(t, n, "%s acquired", row)
		assert.Equal(t, "0", m[3], "%s overlaps", row)
	}
	// Plain output (not a terminal): no escape sequences, a status line a second.
	assert.NotContains(t, out, "\x1b[")
	assert.Contains(t, out, "STATUS   phase")
}

func TestDemoEmbedded(t *testing.T) {
	t.Parallel()
	// No redis-server needed: PATH holds nothing.
	r := cli(t, "", []string{"PATH="}, "demo", "--duration", "6s")
	checkCleanDemo(t, r)
	assert.Contains(t, r.stdout, "lockbridge demo on embedded Redis (miniredis)")
}

func TestDemoRealServer(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	r := cli(t, "", []string{"REDIS_URL=redis://127.0.0.1:1"}, "demo", "--duration", "6s", "--redis", srv.URL())
	checkCleanDemo(t, r)
	assert.Contains(t, r.stdout, "lockbridge demo on Redis "+srv.Addr())
	// It cleans up after itself.
	c := locktest.GoRedis(t, srv)
	n, err := c.Do(context.Background(), "DBSIZE")
	require.NoError(t, err)
	assert.Equal(t, int64(0), n, "the demo leaves no key behind")
}

func TestDemoOverlapExits3(t *testing.T) {
	t.Parallel()
	r := cli(t, "", nil, "demo", "--keep-java", "--java", "4", "--go", "2", "--locks", "1", "--duration", "3s", "--quiet",
		"300ms")
	oneLineError(t, r, 3, "overlaps: two holders held one lock at once")
	assert.Contains(t, r.stdout, "UNSAFE RUN")
	assert.Contains(t, r.stdout, "OVERLAPS: ")
	assert.Contains(t, r.stdout, "(Java seed) and go-")
	assert.Contains(t, r.stdout, "This is why the controller refuses to pass dual-write while a legacy locker runs.")
}

func TestDemoNamespaceInUse(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c := locktest.GoRedis(t, srv)
	ctx := context.Background()
	// A real fleet's namespace is refused outright: the demo moves its
	// namespace's phase and deletes its keys.
	r := cli(t, "", nil, "demo", "--redis", srv.URL(), "--namespace", "prod", "--duration", "3s")
	oneLineError(t, r, 2, `--namespace must start with "lockbridge-demo-"`)

	// A demo namespace in use is refused too.
	ns := "lockbridge-demo-prod"
	ctl, err := migrate.NewController(c, ns, migrate.WithInitSilence(time.Millisecond))
	require.NoError(t, err)
	_, err = ctl.Init(ctx, false)
	require.NoError(t, err)
	l := migrate.New(c, migrate.WithPhaseFrom(ns))
	defer l.Close(ctx)
	_, err = l.Phase(ctx)
	require.NoError(t, err)
	r = cli(t, "", nil, "demo", "--redis", srv.URL(), "--namespace", ns, "--duration", "3s")
	oneLineError(t, r, 1, `namespace "`+ns+`" has 1 live clients`)
	p, err := ctl.Phase(ctx)
	require.NoError(t, err)
	assert.Equal(t, migrate.PhaseLegacy, p, "the demo left the namespace alone")
}

// The terminal view redraws in place: it moves back over its last block
// and clears it, prints new events above, and draws the block again.
func TestRendererTTY(t *testing.T) {
	var buf bytes.Buffer
	r := newRenderer(&buf, true)
	r.header = "header"
	snap := fleetsim.Snapshot{
		Elapsed: 1500 * time.Millisecond, Phase: migrate.PhaseDualWrite,
		Stage: "dual-write: redeploying go-2 in dual-write (2/4) and a stage text long enough to be cut at the edge of the " +
			"terminal",
		Workers: []fleetsim.Worker{
			{Name: "java-1", Kind: fleetsim.Java, Phase: migrate.PhaseLegacy, State: fleetsim.StateRunning,
				Counts: fleetsim.Counts{Acquired: 5, Contended: 2}},
			{Name: "go-1", Kind: fleetsim.Go, Phase: migrate.PhaseDualWrite, State: fleetsim.StateDeploying,
				Counts: fleetsim.Counts{Acquired: 7}},
		},
		ByKind:  map[fleetsim.Kind]fleetsim.Counts{fleetsim.Java: {Acquired: 5, Contended: 2}, fleetsim.Go: {Acquired: 7}},
		ByPhase: map[migrate.Phase]fleetsim.Counts{migrate.PhaseDualWrite: {Acquired: 7}},
	}
	r.snap = func() fleetsim.Snapshot { return snap }
	r.draw(false)
	first := buf.String()
	assert.NotContains(t, first, "\x1b[")
	lines := strings.Count(first, "\n")
	for _, l := range strings.Split(first, "\n") {
		assert.LessOrEqual(t, len([]rune(l)), liveWidth, "%q", l)
	}
	assert.Contains(t, first, "phase DUAL-WRITE")
	assert.Contains(t, first, "java-1   Java seed  legacy")
	assert.Contains(t, first, "go acquired by phase: legacy 0, dual-write 7, dual-read 0, modern 0")

	buf.Reset()
	r.event(fleetsim.Event{At: 2 * time.Second, Kind: fleetsim.EventDeploy, Text: "go-2 redeployed"})
	r.draw(false)
	second := buf.String()
	require.True(t, strings.HasPrefix(second, "\x1b["+strconv.Itoa(lines)+"F\x1b[J"), "%q", second)
	assert.Contains(t, second, "  2.00s  DEPLOY   go-2 redeployed\n")
	assert.Less(t, strings.Index(second, "DEPLOY"), strings.Index(second, "phase DUAL-WRITE"), "events go above the block")
}

// The plain view prints the events and one status line per tick, and
// nothing but the events on the final draw.
func TestRendererPlain(t *testing.T) {
	var buf bytes.Buffer
	r := newRenderer(&buf, false)
	snap := fleetsim.Snapshot{Phase: migrate.PhaseModern, Workers: []fleetsim.Worker{{Name: "go-1", Kind: fleetsim.Go,
		Phase: migrate.PhaseModern}}}
	r.start(func() fleetsim.Snapshot { return snap })
	r.event(fleetsim.Event{Kind: fleetsim.EventPhase, Text: "controller advanced"})
	r.stop()
	out := buf.String()
	assert.Contains(t, out, "PHASE    controller advanced")
	assert.NotContains(t, out, "STATUS", "the final draw prints no status line")
	buf.Reset()
	r.draw(false)
	assert.Contains(t, buf.String(), "STATUS   phase modern | go-1=modern | java 0/0 running")
}

// In process, so that TestMain's leak check sees it: the demo stops
// everything it starts (workers, followers, subscriptions, the renderer,
// the embedded Redis and the client).
func TestDemoInProcess(t *testing.T) {
	var out, errb bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(string) string { return "" },
		isTTY: true}
	code := run(e, []string{"demo", "--duration", "3s", "--go", "2", "--java", "2", "--quiet", "300ms"})
	require.Equal(t, 0, code, "stderr: %s\nstdout: %s", errb.String(), out.String())
	assert.Contains(t, out.String(), "\x1b[", "a terminal gets the view redrawn in place")
	assert.Contains(t, out.String(), "overlaps: 0 — no two holders ever held a lock at once.")
}

// --java-migrates checks its flags before it starts anything.
func TestDemoJavaMigratesUsage(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"embedded", []string{}, "--java-migrates needs --redis redis://host:port"},
		{"password", []string{"--redis", "redis://u:p@127.0.0.1:1"}, "takes a plain redis://host:port URL"},
		{"tls", []string{"--redis", "rediss://127.0.0.1:1"}, "takes a plain redis://host:port URL"},
		{"keep-java", []string{"--redis", "redis://127.0.0.1:1", "--keep-java"},
			"--keep-java does not apply to --java-migrates"},
		{"short lease", []string{"--redis", "redis://127.0.0.1:1", "--lease", "500ms"}, "needs --lease >= 1s"},
		{"no java", []string{"--redis", "redis://127.0.0.1:1", "--java", "0"}, "needs Java workers"},
		{"namespace", []string{"--redis", "redis://127.0.0.1:1", "--namespace", "prod", "--java-jar", "demo_java.go"},
			`--namespace must start with "lockbridge-demo-"`},
	} {
		c := c
		t.Run(c.name, func(t *testing.T) {
			r := cli(t, "", nil, append([]string{"demo", "--java-migrates"}, c.args...)...)
			oneLineError(t, r, 2, c.want)
		})
	}
	r := cli(t, "", nil, "demo", "--java-migrates", "--redis", "redis://127.0.0.1:1", "--java-jar", "no/such.jar")
	oneLineError(t, r, 1, "no Java worker at no/such.jar")
}

// The live block fits any terminal: no line reaches the last column, fewer
// lines than rows (workers left out, and counted, when they do not fit),
// the progress line always there.
func TestLiveBlockFits(t *testing.T) {
	snap := fleetsim.Snapshot{Elapsed: 2 * time.Second, Phase: migrate.PhaseDualRead,
		Reached: []migrate.Phase{migrate.PhaseLegacy, migrate.PhaseDualWrite, migrate.PhaseDualRead},
		Stage:   "dual-read: redeploying go-2 in dual-read (2/4), with a stage text long enough to be cut"}
	for i := 1; i <= 12; i++ {
		snap.Workers = append(snap.Workers, fleetsim.Worker{Name: "go-" + strconv.Itoa(i), Kind: fleetsim.Go,
			Phase: migrate.PhaseDualRead, State: fleetsim.StateRunning})
	}
	for _, size := range [][2]int{{60, 20}, {60, 12}, {200, 50}, {80, 24}, {30, 8}} {
		w, h := size[0], size[1]
		block := liveBlock(snap, w, h, progressLine(snap, 8*time.Second))
		lines := strings.Split(strings.TrimSuffix(block, "\n"), "\n")
		assert.Less(t, len(lines), h, "%dx%d:\n%s", w, h, block)
		for _, l := range lines {
			assert.Less(t, len([]rune(l)), w, "%dx%d: %q", w, h, l)
		}
		assert.Contains(t, block, "phase 3 of 4", "%dx%d", w, h)
		if len(snap.Workers)+9 > h {
			assert.Contains(t, block, "more workers", "%dx%d", w, h)
		} else {
			assert.Contains(t, block, "go-12", "%dx%d", w, h)
		}
	}
	assert.Equal(t, "  phase 3 of 4 (dual-read) · about 6s left", progressLine(snap, 8*time.Second))
	snap.Reached = append(snap.Reached, migrate.PhaseModern, migrate.PhaseDualRead)
	snap.Elapsed = 9 * time.Second
	assert.Equal(t, "  phase 3 of 4 (dual-read, rolled back) · finishing", progressLine(snap, 8*time.Second))
}
