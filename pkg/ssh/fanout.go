package ssh

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
)

// DefaultParallel is the concurrency of Each and ForEach when the caller
// passes 0: high enough that a typical cluster's hosts go in one or two
// waves, low enough not to trip sshd's MaxStartups behind one bastion or
// swamp a laptop.
const DefaultParallel = 10

// Each runs fn for every item, at most parallel at a time (0 or less means
// DefaultParallel), and waits for all of them. It is slipway's one fan-out:
// probing hosts, running a parallel group of a plan and resetting hosts all
// go through it. A failing item does not stop the others; every failure
// comes back, joined with errors.Join in the order of items. fn runs for
// every item even after ctx is cancelled, so that each item's error says
// which item it was: fn checks ctx before it starts work.
func Each[T any](ctx context.Context, items []T, parallel int, fn func(context.Context, T) error) error {
	if parallel <= 0 {
		parallel = DefaultParallel
	}
	errs := make([]error, len(items))
	var g errgroup.Group
	g.SetLimit(parallel)
	for i, item := range items {
		// Go waits for a free slot; each goroutine writes only its own errs[i].
		g.Go(func() error {
			errs[i] = fn(ctx, item)
			return nil
		})
	}
	_ = g.Wait() // every goroutine returns nil: the errors are in errs
	return errors.Join(errs...)
}

// Event reports one host's progress through ForEach: once when it starts
// and once when it is done (Done true, Err its error).
type Event struct {
	Host    string
	Done    bool
	Err     error
	Elapsed time.Duration
}

// ForEach is Each over SSH targets: every failure names its host, and
// progress, if not nil, gets an Event when each host starts and finishes
// (calls are serialized). Once ctx is cancelled, hosts not started yet fail
// with ctx's error and get only their Done event.
func ForEach(ctx context.Context, targets []Target, parallel int, fn func(context.Context, Target) error, progress func(Event)) error {
	var mu sync.Mutex
	report := func(e Event) {
		if progress != nil {
			mu.Lock()
			progress(e)
			mu.Unlock()
		}
	}
	return Each(ctx, targets, parallel, func(ctx context.Context, t Target) error {
		if err := ctx.Err(); err != nil {
			err = withHost(t, err)
			report(Event{Host: t.String(), Done: true, Err: err})
			return err
		}
		start := time.Now()
		report(Event{Host: t.String()})
		err := fn(ctx, t)
		if err != nil {
			err = withHost(t, err)
		}
		report(Event{Host: t.String(), Done: true, Err: err, Elapsed: time.Since(start)})
		return err
	})
}

// withHost prefixes err with the host unless it already names it.
func withHost(t Target, err error) error {
	if hostOf(err) == t.String() {
		return err
	}
	return fmt.Errorf("%s: %w", t, err)
}
