package modernproto

import "fmt"

// FenceCode is the error code of the acquire script's refusal of an
// unusable fence counter (the first word of its error reply).
const FenceCode = "FENCE"

// FenceError is an acquire refused because the fence counter cannot give a
// fence: it holds another type than string, a value that is not a decimal
// integer, or 9223372036854775807. The script checks the counter before it
// writes anything: the lock was not taken and the counter is unchanged. It
// wraps the server's reply (a driver.ReplyError with the code FENCE), which
// says what the counter holds. Repair: set the counter to an integer at
// least as high as every fence already handed out (a fence is never lower
// than the server's TIME in microseconds when it was issued), or delete it
// if no storage has seen a fence of this lock (see the fencing notes).
type FenceError struct {
	Pkg     string // "modern", "migrate"
	Key     string // the lock key
	Counter string // the fence counter key
	Err     error  // the server's reply
}

func (e *FenceError) Error() string {
	return fmt.Sprintf("%s: acquire %q: fence counter %q unusable, lock not taken: %v", e.Pkg, e.Key, e.Counter, e.Err)
}

// Unwrap returns the server's reply.
func (e *FenceError) Unwrap() error { return e.Err }

// WrongTypeError is a script that found the lock key holding another type
// than string (a hash, a list, …): not a lock of this protocol, so neither
// held nor free. Nothing was written. It wraps the server's WRONGTYPE reply
// (driver.HasPrefix(err, "WRONGTYPE") holds).
type WrongTypeError struct {
	Pkg string // "modern", "redlock"
	Op  string // "acquire", "unlock", "refresh", "ttl"
	Key string
	Err error // the server's reply
}

func (e *WrongTypeError) Error() string {
	return fmt.Sprintf("%s: %s %q: the key holds a value of another type than string: %v", e.Pkg, e.Op, e.Key, e.Err)
}

// Unwrap returns the server's reply.
func (e *WrongTypeError) Unwrap() error { return e.Err }
