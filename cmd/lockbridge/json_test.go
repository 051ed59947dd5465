package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/lockbridge/lockbridge/internal/testing/javareplay"
	"github.com/lockbridge/lockbridge/migrate"
	"github.com/lockbridge/lockbridge/modern"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// decodeJSON decodes one JSON object.
func decodeJSON(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(s), &m), "not one JSON object: %s", s)
	return m
}

// jsonKeys collects every object key of a JSON value, by schema.
func jsonKeys(v any, into map[string]bool) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			into[k] = true
			jsonKeys(x, into)
		}
	case []any:
		for _, x := range v {
			jsonKeys(x, into)
		}
	}
}

// documented checks that docs/cli.md names every key of doc, under the
// heading of its schema.
func documented(t *testing.T, doc map[string]any) {
	t.Helper()
	raw, err := os.ReadFile("../../docs/cli.md")
	require.NoError(t, err)
	schema, _ := doc["schema"].(string)
	require.NotEmpty(t, schema)
	i := strings.Index(string(raw), "### `"+schema+"`")
	require.NotEqual(t, -1, i, "docs/cli.md has no section for %s", schema)
	sec := string(raw)[i+1:]
	if j := strings.Index(sec, "\n### "); j >= 0 {
		sec = sec[:j]
	}
	keys := map[string]bool{}
	jsonKeys(doc, keys)
	var missing []string
	for k := range keys {
		if !strings.Contains(sec, "`"+k+"`") && !strings.Contains(sec, "."+k+"`") {
			missing = append(missing, k)
		}
	}
	sort.Strings(missing)
	assert.Empty(t, missing, "fields of %s not in docs/cli.md", schema)
}

func TestInspectJSON(t *testing.T) {
	t.Parallel()
	c, env := server(t)
	ctx := context.Background()
	exp, ok, err := javareplay.Lock(ctx, c, "orders:42", time.Minute, nil)
	require.NoError(t, err)
	require.True(t, ok)
	ml, err := migrate.New(c, migrate.WithPhase(migrate.PhaseDualWrite),
		migrate.WithModern(modern.WithFencing())).TryLock(ctx, "pay:1", time.Minute)
	require.NoError(t, err)
	r := cli(t, "", env, "phase", "init", "--silence", "10ms", "--namespace", "shop")
	require.Equal(t, 0, r.code, r.stderr)

	r = cli(t, "", env, "inspect", "orders:42", "--output", "json", "--namespace", "shop")
	require.Equal(t, 0, r.code, r.stderr)
	doc := decodeJSON(t, r.stdout)
	assert.Equal(t, "lockbridge.inspect/v1", doc["schema"])
	assert.Equal(t, "orders:42", doc["name"])
	keys := doc["keys"].([]any)
	require.Len(t, keys, 2, "raw and jdk-string")
	raw := keys[0].(map[string]any)
	assert.Equal(t, "raw", raw["codec"])
	leg := raw["legacy"].(map[string]any)
	assert.Equal(t, "string", leg["type"])
	assert.Equal(t, float64(-1), leg["pttl_ms"])
	val := leg["value"].(map[string]any)
	b, err := base64.StdEncoding.DecodeString(val["b64"].(string))
	require.NoError(t, err)
	assert.Equal(t, []byte(val["text"].(string)), b, "printable bytes show as they are")
	var decimal map[string]any
	for _, d := range leg["decoded"].([]any) {
		if d.(map[string]any)["codec"] == "decimal" {
			decimal = d.(map[string]any)
		}
	}
	require.NotNil(t, decimal)
	assert.Equal(t, true, decimal["parses"])
	assert.Equal(t, float64(exp), decimal["value"])
	assert.Equal(t, "ms", decimal["unit"])
	assert.Equal(t, false, decimal["expired"])
	assert.Equal(t, time.UnixMilli(exp).UTC().Format("2006-01-02T15:04:05.000Z07:00"), decimal["expires_at"])
	assert.Equal(t, "none", raw["modern"].(map[string]any)["type"])
	assert.Equal(t, "{orders:42}:modern", raw["modern_key"].(map[string]any)["text"])
	jdk := keys[1].(map[string]any)
	assert.Equal(t, "jdk-string", jdk["codec"])
	assert.Equal(t, `\xac\xed\x00\x05t\x00\x09orders:42`, jdk["key"].(map[string]any)["text"])
	ns := doc["namespace"].(map[string]any)
	assert.Equal(t, "shop", ns["name"])
	assert.Equal(t, "legacy", ns["phase"])
	assert.Nil(t, ns["phase_problem"])
	documented(t, doc)

	// A modern key with its fence counter.
	r = cli(t, "", env, "inspect", "pay:1", "-o", "json", "--key-codec", "raw")
	require.Equal(t, 0, r.code, r.stderr)
	doc = decodeJSON(t, r.stdout)
	m := doc["keys"].([]any)[0].(map[string]any)["modern"].(map[string]any)
	assert.Equal(t, ml.Token(), m["value"].(map[string]any)["text"])
	assert.Greater(t, m["pttl_ms"], float64(0))
	assert.Equal(t, "{pay:1}:modern:fence", m["fence"].(map[string]any)["key"].(map[string]any)["text"])
	documented(t, doc)
}

func TestPhaseAndFleetJSON(t *testing.T) {
	t.Parallel()
	c, env := server(t)
	ctx := context.Background()
	addr := srvAddr(env)
	r := cli(t, "", env, "phase", "init", "--silence", "10ms", "--namespace", "j", "-o", "json")
	require.Equal(t, 0, r.code, r.stderr)
	doc := decodeJSON(t, r.stdout)
	assert.Equal(t, map[string]any{"schema": "lockbridge.phase/v1", "action": "init", "namespace": "j",
		"server": "Redis " + addr,
		"phase":  "legacy", "changed": true, "overridden": []any{}}, doc)
	documented(t, doc)

	r = cli(t, "", env, "phase", "set", "dual-write", "--namespace", "j", "-o", "json")
	require.Equal(t, 0, r.code, r.stderr)
	doc = decodeJSON(t, r.stdout)
	assert.Equal(t, "legacy", doc["from"])
	assert.Equal(t, "dual-write", doc["phase"])
	assert.Equal(t, true, doc["changed"])
	documented(t, doc)

	r = cli(t, "", env, "phase", "get", "--namespace", "j", "-o", "json")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "dual-write", decodeJSON(t, r.stdout)["phase"])

	// A lagging client: the next step is not safe, exit 4, and the JSON
	// says why.
	l := migrate.New(c, migrate.WithPhase(migrate.PhaseLegacy), migrate.WithNamespace("j"),
		migrate.WithPhaseInterval(time.Hour))
	defer l.Close(ctx)
	_, err := l.Phase(ctx)
	require.NoError(t, err)
	r = cli(t, "", env, "fleet", "--namespace", "j", "-o", "json")
	oneLineError(t, r, exitUnsafe, "namespace j: the next step dual-write → dual-read is not safe")
	doc = decodeJSON(t, r.stdout)
	assert.Equal(t, "lockbridge.fleet/v1", doc["schema"])
	assert.Equal(t, "dual-write", doc["phase"])
	next := doc["next_step"].(map[string]any)
	assert.Equal(t, "dual-read", next["to"])
	assert.Equal(t, false, next["safe"])
	assert.NotEmpty(t, next["blockers"])
	clients := doc["clients"].([]any)
	require.Len(t, clients, 1)
	cl := clients[0].(map[string]any)
	assert.Equal(t, "legacy", cl["phase"])
	assert.Equal(t, true, cl["live"])
	assert.Nil(t, doc["legacy_sighting"])
	documented(t, doc)

	// Unknown phase: exit 4 too.
	r = cli(t, "", env, "fleet", "--namespace", "never", "-o", "json")
	oneLineError(t, r, exitUnsafe, "namespace never: phase unknown (namespace not initialised)")
	doc = decodeJSON(t, r.stdout)
	assert.Nil(t, doc["phase"])
	assert.Equal(t, "namespace not initialised", doc["phase_problem"])
}

func TestDoctorJSON(t *testing.T) {
	t.Parallel()
	_, env := server(t)
	r := cli(t, "", env, "doctor", "-o", "json")
	require.Equal(t, 0, r.code, r.stderr)
	doc := decodeJSON(t, r.stdout)
	assert.Equal(t, "lockbridge.doctor/v1", doc["schema"])
	assert.Equal(t, "Redis "+srvAddr(env), doc["server"])
	assert.Equal(t, "default", doc["user"])
	assert.Equal(t, map[string]any{"ok": float64(5), "warn": float64(1), "unknown": float64(0), "danger": float64(0)},
		doc["counts"])
	fs := doc["findings"].([]any)
	first := fs[0].(map[string]any)
	assert.Equal(t, "warn", first["severity"], "the most severe first")
	assert.Equal(t, "persistence", first["id"])
	assert.Contains(t, first["fix"], "appendonly yes")
	documented(t, doc)
}
