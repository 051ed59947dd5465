package docsection

import (
	"fmt"
	"os"
	"regexp"
	"strings"
)

func begin(name string) string { return "<!-- begin " + name + " -->" }
func end(name string) string   { return "<!-- end " + name + " -->" }

var beginRE = regexp.MustCompile(`(?m)^<!-- begin ([A-Za-z0-9_.-]+) -->$`)

// Section is one marked section: its name and its text, the markers
// included.
type Section struct {
	Name, Text string
}

// All returns the marked sections of doc, in order. A begin marker without
// its end marker is an error.
func All(doc string) ([]Section, error) {
	var out []Section
	for _, m := range beginRE.FindAllStringSubmatchIndex(doc, -1) {
		name := doc[m[2]:m[3]]
		rest := doc[m[0]:]
		j := strings.Index(rest, end(name))
		if j < 0 {
			return nil, fmt.Errorf("docsection: %q begins but does not end", name)
		}
		out = append(out, Section{Name: name, Text: rest[:j+len(end(name))]})
	}
	return out, nil
}

// Replace returns doc with the section name's body replaced by body, the
// section added at the end when doc has none.
func Replace(doc, name, body string) string {
	text := begin(name) + "\n" + strings.TrimRight(body, "\n") + "\n" + end(name)
	i := strings.Index(doc, begin(name))
	if i >= 0 {
		if j := strings.Index(doc[i:], end(name)); j >= 0 {
			return doc[:i] + text + doc[i+j+len(end(name)):]
		}
	}
	return strings.TrimRight(doc, "\n") + "\n\n" + text + "\n"
}

// Carry returns into with every marked section of from: replaced where into
// has it, added at the end where it has not.
func Carry(from, into string) (string, error) {
	secs, err := All(from)
	if err != nil {
		return "", err
	}
	for _, s := range secs {
		body := strings.TrimSuffix(strings.TrimPrefix(s.Text, begin(s.Name)+"\n"), end(s.Name))
		into = Replace(into, s.Name, body)
	}
	return into, nil
}

// WriteFile replaces the section name of the file at path by body (the file
// is created when missing) and writes it back.
func WriteFile(path, name, body string) error {
	old, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	return os.WriteFile(path, []byte(Replace(string(old), name, body)), 0o644)
}
