// Package model holds the spin models of the lock protocols (see
// README.md); this test ties them to the code: every script file and
// `-- @label` the models name exists, every Go function and Java method
// they name exists, and the owner-window outcomes legacy.pml assumes are what the real
// release.lua and refresh.lua return on a real redis-server.
package model

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/lockbridge/lockbridge/internal/testing/redistest"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	luaRef = regexp.MustCompile(`([A-Za-z0-9_]+/[A-Za-z0-9_/]+\.lua)((?:\s+@[a-z-]+)*)`)
	goRef  = regexp.MustCompile(`Go:\s*([A-Za-z_.,\s]+)`)
	// javaRef names Java methods as Class.method (other words after
	// "Java:" are prose).
	javaRef = regexp.MustCompile(`Java:\s*([A-Za-z_.,\s]+)`)
	javaID  = regexp.MustCompile(`^([A-Z][A-Za-z0-9_]*)\.([a-z][A-Za-z0-9_]*)$`)
	ident   = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?$`)
)

func models(t *testing.T) map[string]string {
	files, err := filepath.Glob("*.pml")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	out := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		out[f] = string(b)
	}
	return out
}

// TestModelRefsExist: every .lua file a model names exists, with every
// `-- @label` named after it; every Go function named after "Go:" is
// declared somewhere in the module; every Java method named as Class.method
// after "Java:" is declared in that class of the Java library.
func TestModelRefsExist(t *testing.T) {
	goSrc := goSources(t)
	refs := 0
	for name, src := range models(t) {
		for _, m := range luaRef.FindAllStringSubmatch(src, -1) {
			refs++
			path := filepath.Join("..", m[1])
			b, err := os.ReadFile(path)
			if !assert.NoError(t, err, "%s names %s", name, m[1]) {
				continue
			}
			for _, l := range strings.Fields(m[2]) {
				assert.Regexp(t, regexp.MustCompile(`(?m)^\s*-- `+regexp.QuoteMeta(l)+`(?:[:\s]|$)`), string(b),
					"%s names %s %s: no such label comment in the script", name, m[1], l)
			}
		}
		for _, m := range goRef.FindAllStringSubmatch(src, -1) {
			for _, id := range strings.FieldsFunc(m[1],
				func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' }) {
				if !ident.MatchString(id) {
					continue
				}
				refs++
				fn := id
				if i := strings.LastIndex(id, "."); i >= 0 {
					fn = id[i+1:]
				}
				if !regexp.MustCompile(`(?m)^func (\([^)]*\) )?` + regexp.QuoteMeta(fn) + `[\[(]`).MatchString(goSrc) {
					t.Errorf("%s names the Go function %s: not declared in the module", name, id)
				}
			}
		}
		for _, m := range javaRef.FindAllStringSubmatch(src, -1) {
			for _, id := range strings.FieldsFunc(m[1],
				func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' }) {
				jm := javaID.FindStringSubmatch(id)
				if jm == nil {
					continue
				}
				refs++
				path := filepath.Join("..", "java", "src", "main", "java", "io", "lockbridge", jm[1]+".java")
				b, err := os.ReadFile(path)
				if !assert.NoError(t, err, "%s names the Java method %s", name, id) {
					continue
				}
				decl := regexp.MustCompile(
					`(?m)^\s+(?:(?:public|protected|private|static|final|synchronized)\s+)*[A-Za-z_][A-Za-z0-9_<>\[\], ]*\s` +
						regexp.QuoteMeta(jm[2]) + `\(`)
				assert.True(t, decl.Match(b), "%s names the Java method %s: not declared in %s", name, id, path)
			}
		}
	}
	assert.Greater(t, refs, 20)
}

func goSources(t *testing.T) string {
	var b strings.Builder
	err := filepath.Walk("..", func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if info.IsDir() && (info.Name() == "bench" || info.Name() == "testdata" || strings.HasPrefix(info.Name(),
			".")) && path != ".." {
			return filepath.SkipDir
		}
		if strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
			src, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			b.Write(src)
			b.WriteByte('\n')
		}
		return nil
	})
	require.NoError(t, err)
	return b.String()
}

// The owner-window outcome legacy.pml assumes (its OWNER inline, the real
// model's CALLER_EXPIRED and SERVER_LATE): 1 ours, 0 taken, -1 gone, -2
// expired by the caller's clock, -3 late by the server's clock.
func modelOwner(present bool, stored, w, now, lease, server, margin int64) int64 {
	switch {
	case !present:
		return -1
	case 2*abs(stored-w) > lease:
		return 0
	case !(now < w):
		return -2
	case server > w+margin:
		return -3
	}
	return 1
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// script assembles a shipped script as the legacy package does: the
// fragments of internal/protocol/luafrag, then the body.
func script(t *testing.T, body string, frags ...string) string {
	var b strings.Builder
	for _, f := range frags {
		src, err := os.ReadFile(filepath.Join("..", "internal", "protocol", "luafrag", f))
		require.NoError(t, err)
		b.Write(src)
		b.WriteByte('\n')
	}
	src, err := os.ReadFile(filepath.Join("..", body))
	require.NoError(t, err)
	b.Write(src)
	return b.String()
}

// TestOwnerWindowOutcomes runs the real legacy release.lua and refresh.lua
// on a real redis-server over a grid of representative inputs — stored
// value relative to W, the caller's now, the lease, the margin, and the
// server's clock placed relative to W (by choosing W against the server's
// TIME) — and checks each reply is the code legacy.pml's OWNER computes.
func TestOwnerWindowOutcomes(t *testing.T) {
	srv := redistest.Start(t)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr(), MaxRetries: -1})
	t.Cleanup(func() { _ = c.Close() })
	ctx := context.Background()
	frags := []string{"args.lua", "legacy_decode.lua", "legacy_args.lua", "legacy_now.lua", "legacy_owner.lua"}
	release := script(t, "legacy/scripts/release.lua", frags...)
	refresh := script(t, "legacy/scripts/refresh.lua", frags...)

	const unit = 10_000 // one model time unit, in ms: far above the test's own latency
	cases := 0
	for _, lease := range []int64{4, 6} {
		for _, margin := range []int64{0, 1} {
			for _, dstored := range []int64{-4, -3, -2, 0, 2, 3, 4} {
				for _, dnow := range []int64{-2, -1, 0, 1} { // caller's now - W
					for _, dserver := range []int64{-2, -1, 0, 1, 2} { // server - W
						for _, present := range []bool{true, false} {
							for _, op := range []string{"release", "refresh"} {
								cases++
								name := fmt.Sprintf("%s lease=%d m=%d stored=W%+d now=W%+d server=W%+d present=%v", op, lease, margin, dstored,
									dnow, dserver, present)
								tm, err := c.Time(ctx).Result()
								require.NoError(t, err)
								serverMS := tm.UnixMilli()
								// Place W so that the server's clock is W + dserver
								// units minus half a unit, plus the script's
								// latency (far below half a unit): past W + m
								// exactly when dserver > m, as in the model.
								w := serverMS - dserver*unit + unit/2
								key := "model:" + strconv.Itoa(cases)
								if present {
									require.NoError(t, c.Set(ctx, key, strconv.FormatInt(w+dstored*unit, 10), 0).Err())
								}
								now := w + dnow*unit
								args := []any{"decimal", "ms", w, lease * unit, now, margin * unit}
								src := release
								if op == "refresh" {
									src = refresh
									args = append(args, strconv.FormatInt(w+lease*unit, 10), "0")
								}
								got, err := c.Eval(ctx, src, []string{key}, args...).Int64()
								require.NoError(t, err, name)
								want := modelOwner(present, dstored, 0, dnow, lease, dserver, margin)
								assert.Equal(t, want, got, name)
								// And what the script did to the key.
								v, err := c.Get(ctx, key).Result()
								switch {
								case want == 1 && op == "release":
									assert.ErrorIs(t, err, redis.Nil, "%s: deleted", name)
								case want == 1:
									assert.Equal(t, strconv.FormatInt(w+lease*unit, 10), v, "%s: rewritten", name)
								case present:
									assert.Equal(t, strconv.FormatInt(w+dstored*unit, 10), v, "%s: left alone", name)
								}
								c.Del(ctx, key)
							}
						}
					}
				}
			}
		}
	}
	t.Logf("%d cases", cases)
}
