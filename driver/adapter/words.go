package adapter

import (
	"context"
	"strconv"
	"sync"

	"github.com/lockbridge/lockbridge/driver"
)

// WordsConn is an optional interface of a Conn whose client library takes a
// command's words as strings (rueidis, valkey-go). The Client of Wrap then
// sends scripts and SET NX PX through DoWords, without boxing each word into
// an any for Do only to have the adapter turn it back into a string.
type WordsConn interface {
	// DoWords is Do with the command's words as strings, under the same
	// rules (sent at most once; errors from before the send marked with
	// NotSent). It must not keep words, nor use them, once it returns: the
	// caller reuses the slice.
	DoWords(ctx context.Context, words []string) (any, error)
}

// wordsPool holds the word slices of commands sent through DoWords.
var wordsPool = sync.Pool{New: func() any { s := make([]string, 0, 8); return &s }}

// getWords returns an empty slice from the pool; putWords gives it back.
func getWords() *[]string { return wordsPool.Get().(*[]string) }

func putWords(w *[]string) {
	clear(*w) // hold no strings of the command
	*w = (*w)[:0]
	wordsPool.Put(w)
}

// doWords is do for a WordsConn.
func (c *client) doWords(ctx context.Context, wc WordsConn, words []string) (any, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r, err := wc.DoWords(ctx, words)
	if err != nil && c.follows(err) {
		r, err = c.follow(ctx, err, nil, wc, words)
	}
	if err != nil {
		return r, c.fail(ctx, words[0], err)
	}
	return r, nil
}

// word returns an argument of Eval as a string, for the types the locks
// pass; ok is false for any other (then the command goes through Do).
func word(a any) (s string, ok bool) {
	switch v := a.(type) {
	case string:
		return v, true
	case int64:
		return strconv.FormatInt(v, 10), true
	case int:
		return strconv.Itoa(v), true
	}
	return "", false
}

// evalWords is Eval on a WordsConn; ok is false when an argument has a type
// word does not take (nothing was sent).
func (c *client) evalWords(ctx context.Context, wc WordsConn, s *driver.Script, keys []string, args []any) (r any,
	ok bool, err error) {
	w := getWords()
	defer putWords(w)
	words := append(*w, "EVALSHA", s.Hash(), strconv.Itoa(len(keys)))
	words = append(words, keys...)
	for _, a := range args {
		v, ok := word(a)
		if !ok {
			*w = words
			return nil, false, nil
		}
		words = append(words, v)
	}
	*w = words
	r, err = c.doWords(ctx, wc, words)
	if driver.HasPrefix(err, "NOSCRIPT") {
		words[0], words[1] = "EVAL", s.Source()
		r, err = c.doWords(ctx, wc, words)
	}
	return r, true, err
}

// setNXPXWords sends SET key value NX PX ms on a WordsConn.
func (c *client) setNXPXWords(ctx context.Context, wc WordsConn, key, value string, ms int64) (any, error) {
	w := getWords()
	defer putWords(w)
	*w = append(*w, "SET", key, value, "NX", "PX", c.pxWord(ms).word)
	return c.doWords(ctx, wc, *w)
}
