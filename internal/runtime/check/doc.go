// Package check validates the arguments every locker takes, with errors that
// wrap lockbridge.ErrInvalid and name the calling package.
package check
