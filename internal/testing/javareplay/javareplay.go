package javareplay

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/lockbridge/lockbridge/driver"
)

// Poll is how long Acquire sleeps between two attempts, as the Java loop
// does (Thread.sleep(100)).
const Poll = 100 * time.Millisecond

// NumberFormatError replays java.lang.NumberFormatException: the seed read
// a value Long.parseLong refuses, and lock() throws.
type NumberFormatError struct {
	Input string // the value read
}

func (e *NumberFormatError) Error() string {
	return fmt.Sprintf("seed: java.lang.NumberFormatException: For input string: %q", e.Input)
}

// parseLong is Long.parseLong on ASCII input (strconv.ParseInt agrees with
// it on every ASCII string).
func parseLong(s string) (int64, error) {
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, &NumberFormatError{Input: s}
	}
	return v, nil
}

func clock(now func() time.Time) func() time.Time {
	if now == nil {
		return time.Now
	}
	return now
}

// Lock replays lock() once on key with lease, judging time by now (nil:
// time.Now). It returns the expiry it wrote and whether it considers the
// lock acquired; ok is false after a nil GETSET although the key then
// holds its value (the phantom). err is a Redis error, or a
// *NumberFormatError where the Java code throws.
func Lock(ctx context.Context, c driver.Client, key string, lease time.Duration, now func() time.Time) (expiry int64,
	ok bool, err error) {
	t := clock(now)().UnixMilli()
	expireAt := t + lease.Milliseconds() + 1
	value := strconv.FormatInt(expireAt, 10)
	set, err := c.SetNX(ctx, key, value)
	if err != nil {
		return expireAt, false, fmt.Errorf("javareplay: %w", err)
	}
	if set {
		return expireAt, true, nil
	}
	current, present, err := c.Get(ctx, key)
	if err != nil {
		return expireAt, false, fmt.Errorf("javareplay: %w", err)
	}
	if !present {
		return expireAt, false, nil
	}
	cur, err := parseLong(current)
	if err != nil {
		return expireAt, false, err
	}
	if !(cur < t) {
		return expireAt, false, nil
	}
	old, present, err := c.GetSet(ctx, key, value)
	if err != nil {
		return expireAt, false, fmt.Errorf("javareplay: %w", err)
	}
	if !present {
		return expireAt, false, nil // the phantom: our value stays in the key
	}
	o, err := parseLong(old)
	if err != nil {
		return expireAt, false, err
	}
	return expireAt, o < t, nil
}

// Unlock replays unlock(): DEL key when now (nil: time.Now) is before the
// expiry that Lock returned. It does not look at what the key holds.
func Unlock(ctx context.Context, c driver.Client, key string, expiry int64, now func() time.Time) error {
	if !(clock(now)().UnixMilli() < expiry) {
		return nil
	}
	if _, err := c.Del(ctx, key); err != nil {
		return fmt.Errorf("javareplay: %w", err)
	}
	return nil
}

// Acquire replays the Java blocking loop: Lock, and Poll between attempts,
// until it acquires (returning the expiry written), Lock fails, or ctx ends
// (the error then wraps ctx.Err()).
func Acquire(ctx context.Context, c driver.Client, key string, lease time.Duration,
	now func() time.Time) (int64, error) {
	timer := time.NewTimer(0)
	defer timer.Stop()
	<-timer.C
	for {
		expiry, ok, err := Lock(ctx, c, key, lease, now)
		if err != nil {
			return 0, err
		}
		if ok {
			return expiry, nil
		}
		timer.Reset(Poll)
		select {
		case <-timer.C:
		case <-ctx.Done():
			return 0, fmt.Errorf("javareplay: lock %q not acquired: %w", key, ctx.Err())
		}
	}
}
