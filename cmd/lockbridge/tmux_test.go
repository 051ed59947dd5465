package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The demo's live view in a real terminal: tmux runs it at 60×20 and at
// 200×50, and the pane, captured as it runs, always holds one frame at
// most (no stale frame left by a redraw), no line wider than the pane, and
// the overall progress line.
func TestDemoLiveViewInTmux(t *testing.T) {
	t.Parallel()
	tmux, err := exec.LookPath("tmux")
	require.NoError(t, err, "tmux not found: install it: sudo apt-get install -y tmux (or ./scripts/setup.sh)")
	for _, size := range [][2]int{{60, 20}, {200, 50}} {
		w, h := size[0], size[1]
		t.Run(fmt.Sprintf("%dx%d", w, h), func(t *testing.T) {
			t.Parallel()
			sock := fmt.Sprintf("lockbridge-test-%d-%dx%d", os.Getpid(), w, h)
			tm := func(args ...string) string {
				t.Helper()
				out, err := exec.Command(tmux, append([]string{"-L", sock, "-f", "/dev/null"}, args...)...).CombinedOutput()
				require.NoError(t, err, "tmux %v: %s", args, out)
				return string(out)
			}
			tm("new-session", "-d", "-s", "demo", "-x", strconv.Itoa(w), "-y", strconv.Itoa(h), "env", "PS1=$ ", "TERM=screen",
				"sh")
			t.Cleanup(func() { _ = exec.Command(tmux, "-L", sock, "kill-server").Run() })
			tm("send-keys", "-t", "demo", bin+" demo --duration 8s; echo EXIT=$?", "Enter")

			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			frames, phases := 0, map[string]bool{}
			var pane string
			exited := regexp.MustCompile(`EXIT=\d`)
			for !exited.MatchString(pane) {
				select {
				case <-ctx.Done():
					t.Fatalf("the demo did not end; the pane:\n%s", pane)
				case <-time.After(50 * time.Millisecond):
				}
				pane = tm("capture-pane", "-p", "-t", "demo")
				lines := strings.Split(strings.TrimRight(pane, "\n"), "\n")
				assert.LessOrEqual(t, len(lines), h, "the pane has %d rows", h)
				heads := 0
				for _, l := range lines {
					assert.LessOrEqual(t, len([]rune(l)), w, "a line wider than the pane: %q", l)
					if strings.HasPrefix(l, "── ") {
						heads++
					}
					if strings.HasPrefix(l, "  phase ") && strings.Contains(l, " of 4 (") {
						phases[l[:len("  phase k of 4")]] = true
					}
				}
				require.LessOrEqual(t, heads, 1, "a stale frame left on the screen:\n%s", pane)
				if heads == 1 && strings.Count(pane, "WORKER") == 1 && strings.Contains(pane, " of 4 (") {
					frames++
				}
			}
			assert.Contains(t, pane, "EXIT=0", pane)
			assert.Positive(t, frames, "the live view was seen")
			for _, k := range []string{"1", "2", "3", "4"} {
				assert.True(t, phases["  phase "+k+" of 4"], "the progress line showed phase %s of 4 (saw %v)", k, phases)
			}
			if h >= 50 {
				// Tall enough: the summary is on the screen at the end.
				assert.Contains(t, pane, "overlaps: 0 — no two holders ever held a lock at once.")
			}
		})
	}
}
