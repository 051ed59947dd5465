package lockbridge_test

import (
	"fmt"
	"time"

	"github.com/lockbridge/lockbridge"
)

// The waiting strategies of Locker.Lock: each Delay is an upper bound (a
// lock waits no longer than its holder has left, and wakes at once on a
// release notification where those exist).
func ExampleExponentialBackoff() {
	b := lockbridge.ExponentialBackoff(10*time.Millisecond, 80*time.Millisecond)
	for n := 1; n <= 5; n++ {
		d, _ := b.Delay(n)
		fmt.Println(n, d >= 5*time.Millisecond && d <= 80*time.Millisecond)
	}
	_, again := lockbridge.NoRetry().Delay(1)
	fmt.Println("NoRetry retries:", again)
	// Output:
	// 1 true
	// 2 true
	// 3 true
	// 4 true
	// 5 true
	// NoRetry retries: false
}
