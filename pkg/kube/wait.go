package kube

import (
	"context"
	"fmt"
	"time"
)

// Condition reports whether a wait is over, and otherwise what it observed, for the timeout
// message. An error ends the wait unless it is marked transient by returning done=false with it.
type Condition func(ctx context.Context) (done bool, observed string, err error)

// Poll is the interval between checks of a condition.
var Poll = 2 * time.Second

// Wait checks cond until it is done, ctx ends, or timeout passes. On timeout the error says what
// it waited for and the last state it saw.
func Wait(ctx context.Context, what string, timeout time.Duration, cond Condition) error {
	deadline := time.Now().Add(timeout)
	last := "nothing observed yet"
	var lastErr error
	t := time.NewTicker(Poll)
	defer t.Stop()
	for {
		done, observed, err := cond(ctx)
		if done {
			return err
		}
		if observed != "" {
			last = observed
		}
		lastErr = err
		if time.Now().After(deadline) {
			msg := fmt.Sprintf("timed out after %s waiting for %s; last seen: %s", timeout, what, last)
			if lastErr != nil {
				msg += fmt.Sprintf(" (last error: %v)", lastErr)
			}
			return fmt.Errorf("%s", msg)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w (last seen: %s)", what, ctx.Err(), last)
		case <-t.C:
		}
	}
}
