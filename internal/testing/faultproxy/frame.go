package faultproxy

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// readFrame reads one RESP2 or RESP3 value from r and appends its exact
// bytes to raw. For a command (a client's array of bulk strings, or an
// inline command) it also returns the words. kind is the value's type byte.
func readFrame(r *bufio.Reader, raw *bytes.Buffer, wantWords bool) (words []string, kind byte, err error) {
	b, err := r.Peek(1)
	if err != nil {
		return nil, 0, err
	}
	kind = b[0]
	if wantWords && kind != '*' {
		// An inline command: one line of words.
		line, err := readLine(r, raw)
		if err != nil {
			return nil, 0, err
		}
		return strings.Fields(line), kind, nil
	}
	var collect *[]string
	if wantWords {
		collect = &words
	}
	if err := readValue(r, raw, collect, 0); err != nil {
		return nil, 0, err
	}
	if kind == '|' { // an attribute comes before the value it describes
		if err := readValue(r, raw, nil, 0); err != nil {
			return nil, 0, err
		}
	}
	return words, kind, nil
}

// readLine reads one CRLF-terminated line into raw and returns it without
// the line end.
func readLine(r *bufio.Reader, raw *bytes.Buffer) (string, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	raw.WriteString(line)
	return strings.TrimRight(line, "\r\n"), nil
}

// readValue reads one value; words, when not nil, receives the top-level
// array's bulk strings.
func readValue(r *bufio.Reader, raw *bytes.Buffer, words *[]string, depth int) error {
	if depth > 64 {
		return errors.New("faultproxy: RESP nesting too deep")
	}
	line, err := readLine(r, raw)
	if err != nil {
		return err
	}
	if line == "" {
		return errors.New("faultproxy: empty RESP line")
	}
	switch line[0] {
	case '+', '-', ':', ',', '#', '_', '(':
		return nil
	case '$', '!', '=':
		n, err := strconv.Atoi(line[1:])
		if err != nil {
			return fmt.Errorf("faultproxy: bad length %q", line)
		}
		if n < 0 {
			return nil // a null bulk string
		}
		payload := make([]byte, n+2)
		if _, err := ioReadFull(r, payload); err != nil {
			return err
		}
		raw.Write(payload)
		if words != nil {
			*words = append(*words, string(payload[:n]))
		}
		return nil
	case '*', '~', '>', '%', '|':
		n, err := strconv.Atoi(line[1:])
		if err != nil {
			return fmt.Errorf("faultproxy: bad count %q", line)
		}
		if line[0] == '%' || line[0] == '|' {
			n *= 2
		}
		for i := 0; i < n; i++ {
			var w *[]string
			if depth == 0 {
				w = words
			}
			if err := readValue(r, raw, w, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("faultproxy: unknown RESP type %q", line[0])
}

func ioReadFull(r *bufio.Reader, p []byte) (int, error) {
	n := 0
	for n < len(p) {
		m, err := r.Read(p[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}
