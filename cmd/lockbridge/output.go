package main

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"time"
)

// The --output formats. The JSON documents are described in docs/cli.md;
// each carries its schema name and version ("schema": "lockbridge.fleet/v1"),
// and a version only ever gains fields: a field is never renamed, retyped or
// removed within one.
const (
	outputText = "text"
	outputJSON = "json"
)

// wantJSON reports whether --output asks for JSON; cmd is the command,
// json whether it has a JSON form.
func (g *globalFlags) wantJSON(cmd string, json bool) (bool, error) {
	switch g.output {
	case outputText, "":
		return false, nil
	case outputJSON:
		if !json {
			return false, usageErrorf("%s has no --output json (inspect, phase, fleet and doctor have)", cmd)
		}
		return true, nil
	}
	return false, usageErrorf("bad --output %q: want text or json", g.output)
}

// writeJSON writes v as one indented JSON document.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// writeJSONLine writes v as one JSON document on one line (fleet --watch).
func writeJSONLine(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// bytesJSON is a string of Redis bytes in JSON: its exact bytes in base64,
// and a display form (printable ASCII as it is, any other byte \xNN).
type bytesJSON struct {
	Text string `json:"text"`
	B64  string `json:"b64"`
}

func jsonBytes(s string) bytesJSON {
	q := byteQuote(s)
	return bytesJSON{Text: q[1 : len(q)-1], B64: base64.StdEncoding.EncodeToString([]byte(s))}
}

// jsonTime is t in RFC 3339 with milliseconds, UTC; nil when zero.
func jsonTime(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	s := t.UTC().Format("2006-01-02T15:04:05.000Z07:00")
	return &s
}
