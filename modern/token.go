package modern

import (
	"fmt"

	"github.com/lockbridge/lockbridge/internal/protocol/modernproto"
)

// MaxTokenLen is the longest token a WithTokenFunc may return.
const MaxTokenLen = modernproto.MaxTokenLen

// NewToken returns a fresh lock token: 16 bytes from crypto/rand, encoded as
// unpadded base64url (22 printable characters). It is the default token of a
// Locker, and what migrate's modern half writes.
func NewToken() (string, error) {
	tok, err := modernproto.NewToken()
	if err != nil {
		return "", fmt.Errorf("modern: token: %w", err)
	}
	return tok, nil
}
