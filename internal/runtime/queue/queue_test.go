package queue_test

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/internal/runtime/queue"
)

func woken(wake chan struct{}) bool {
	select {
	case <-wake:
		return true
	default:
		return false
	}
}

func TestErrBehindIsNotObtained(t *testing.T) {
	assert.ErrorIs(t, queue.ErrBehind, lockbridge.ErrNotObtained)
	assert.False(t, errors.Is(lockbridge.ErrNotObtained, queue.ErrBehind))
}

// Tickets become the head in the order they joined; each is woken when it
// does, and only then.
func TestFirstComeFirstServed(t *testing.T) {
	var q queue.Queue
	wakes := make([]chan struct{}, 5)
	tickets := make([]*queue.Ticket, 5)
	for i := range tickets {
		wakes[i] = make(chan struct{}, 1)
		tickets[i] = q.Join("k", wakes[i])
	}
	assert.True(t, tickets[0].Head())
	assert.False(t, woken(wakes[0]), "the first is the head at once, not woken")
	for i := 1; i < len(tickets); i++ {
		assert.False(t, tickets[i].Head())
	}
	assert.Equal(t, 5, q.Len("k"))
	for i := range tickets {
		require.True(t, tickets[i].Head(), "ticket %d", i)
		for j := i + 1; j < len(tickets); j++ {
			assert.False(t, tickets[j].Head(), "ticket %d while %d is the head", j, i)
			assert.False(t, woken(wakes[j]), "ticket %d woken before its turn", j)
		}
		tickets[i].Leave()
		assert.False(t, tickets[i].Head(), "a ticket that left is no head")
		if i+1 < len(tickets) {
			assert.True(t, woken(wakes[i+1]), "ticket %d woken when it became the head", i+1)
		}
	}
	assert.Equal(t, 0, q.Lines())
	assert.Equal(t, 0, q.Len("k"))
}

// A waiter that leaves from the middle of the line (its context ended) does
// not disturb the order of the others and wakes nobody.
func TestLeaveFromTheMiddle(t *testing.T) {
	var q queue.Queue
	w := []chan struct{}{make(chan struct{}, 1), make(chan struct{}, 1), make(chan struct{}, 1)}
	a, b, c := q.Join("k", w[0]), q.Join("k", w[1]), q.Join("k", w[2])
	b.Leave()
	b.Leave() // a second Leave does nothing
	assert.False(t, woken(w[0]) || woken(w[1]) || woken(w[2]))
	assert.Equal(t, 2, q.Len("k"))
	assert.True(t, a.Head())
	a.Leave()
	assert.True(t, c.Head())
	assert.True(t, woken(w[2]))
	assert.False(t, woken(w[1]), "the ticket that left is not woken")
	c.Leave()
	assert.Equal(t, 0, q.Lines())

	// The tail leaving: the next joiner queues behind the head still.
	a, c = q.Join("k", w[0]), q.Join("k", w[2])
	c.Leave()
	b = q.Join("k", w[1])
	assert.False(t, b.Head())
	a.Leave()
	assert.True(t, b.Head())
	b.Leave()
	assert.Equal(t, 0, q.Lines())
}

// Wake reaches the head of the key's line only.
func TestWakeReachesTheHead(t *testing.T) {
	var q queue.Queue
	q.Wake("k") // no line: nothing happens
	w := []chan struct{}{make(chan struct{}, 1), make(chan struct{}, 1), make(chan struct{}, 1)}
	a, b := q.Join("k", w[0]), q.Join("k", w[1])
	other := q.Join("other", w[2])
	q.Wake("k")
	assert.True(t, woken(w[0]))
	assert.False(t, woken(w[1]))
	assert.False(t, woken(w[2]), "another key's line is not woken")
	q.Wake("k")
	q.Wake("k") // the buffer holds one: no block
	assert.True(t, woken(w[0]))
	assert.False(t, woken(w[0]))
	a.Leave()
	assert.True(t, woken(w[1]))
	q.Wake("k")
	assert.True(t, woken(w[1]))
	b.Leave()
	other.Leave()
	assert.Equal(t, 0, q.Lines())
}

// What Keep attaches lives as long as the line: replaced, the old one is
// released at once; the last Leave releases the current one.
func TestKeepLivesWithTheLine(t *testing.T) {
	var q queue.Queue
	var released []string
	rel := func(s string) func() { return func() { released = append(released, s) } }
	a, b := q.Join("k", nil), q.Join("k", nil)
	a.Keep(rel("a"))
	a.Leave()
	assert.Empty(t, released, "kept past its ticket while the line lives")
	b.Keep(rel("b"))
	assert.Equal(t, []string{"a"}, released)
	b.Leave()
	assert.Equal(t, []string{"a", "b"}, released)
	assert.Equal(t, 0, q.Lines())

	b.Keep(rel("late")) // after Leave: released at once
	assert.Equal(t, []string{"a", "b", "late"}, released)

	c := q.Join("k", nil)
	c.Keep(nil)
	c.Leave()
	assert.Equal(t, 0, q.Lines())
}

// Many goroutines joining and leaving many keys: one head per line at a
// time, heads in join order, and nothing left when all are gone.
func TestConcurrentLines(t *testing.T) {
	var q queue.Queue
	keys := []string{"a", "b", "c"}
	var inside [3]atomic.Int32
	var overlaps atomic.Int32
	var wg sync.WaitGroup
	for g := 0; g < 24; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				k := (g + i) % len(keys)
				wake := make(chan struct{}, 1)
				tk := q.Join(keys[k], wake)
				if i%7 == 0 {
					tk.Leave() // gave up before its turn
					continue
				}
				for !tk.Head() {
					<-wake
				}
				if inside[k].Add(1) != 1 {
					overlaps.Add(1)
				}
				q.Wake(keys[k])
				inside[k].Add(-1)
				tk.Leave()
			}
		}(g)
	}
	wg.Wait()
	assert.Zero(t, overlaps.Load(), "two heads of one line at once")
	assert.Equal(t, 0, q.Lines())
	for _, k := range keys {
		assert.Equal(t, 0, q.Len(k))
	}
}
