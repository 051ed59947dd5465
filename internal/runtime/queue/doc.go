// Package queue orders the waiters of one Locker on the same key, first
// come first served, so that a Locker's Lock calls on a contended key take
// the lock in the order they asked for it instead of racing each other at
// every release (the winner of such a race is random, so some waiters lose
// many races in a row and the wait has a long tail).
//
// One Queue serves one Locker. A waiter joins its key's line (Join) and
// gets a Ticket; only the ticket at the head of the line may make attempts
// on the server, the others wait their turn without any traffic. The head
// leaves the line (Leave) when it has obtained the lock, given up, or its
// context ended; the next ticket then becomes the head and its wake channel
// receives a send, so it attempts at once. When a lock of the Locker on that
// key is released, the Locker calls Wake and the head's wake channel
// receives a send: it attempts at once, without waiting for the release
// notice to come back from the server.
//
// The queue decides only who in this process tries next. It never hands a
// lock over: the head still has to take the lock on the server, where
// waiters of other processes and calls that do not queue (TryLock) compete
// with it, and exclusion remains the server's alone.
//
// A line lives while it has tickets: the last Leave removes it, and with it
// whatever Keep attached to it (the Locker keeps its release-notification
// registration there, so that the subscription to a contended key is not
// dropped and taken again at every hand-off). A Queue holds no goroutine.
package queue
