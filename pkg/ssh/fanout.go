package ssh

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// DefaultParallel is ForEach's concurrency when the caller passes 0: high
// enough that a typical cluster's hosts go in one or two waves, low enough
// not to trip sshd's MaxStartups behind one bastion or swamp a laptop.
const DefaultParallel = 10

// Event reports one host's progress through ForEach: once when it starts
// and once when it is done (Done true, Err its error).
type Event struct {
	Host    string
	Done    bool
	Err     error
	Elapsed time.Duration
}

// ForEach runs fn for every target, at most parallel at a time (0 means
// DefaultParallel). It waits for all of them and returns every failure
// joined with errors.Join, each naming its host. Once ctx is cancelled,
// targets not yet started fail with ctx's error. progress, if not nil,
// gets an Event when each host starts and finishes; calls are serialized.
func ForEach(ctx context.Context, targets []Target, parallel int, fn func(context.Context, Target) error, progress func(Event)) error {
	if parallel <= 0 {
		parallel = DefaultParallel
	}
	var (
		mu   sync.Mutex
		wg   sync.WaitGroup
		errs = make([]error, len(targets))
		sem  = make(chan struct{}, parallel)
	)
	report := func(e Event) {
		if progress != nil {
			mu.Lock()
			progress(e)
			mu.Unlock()
		}
	}
	for i, t := range targets {
		acquired := false
		if ctx.Err() == nil {
			select {
			case sem <- struct{}{}:
				acquired = true
			case <-ctx.Done():
			}
		}
		// Both cases of the select may be ready at once; check again so no
		// host starts after cancellation.
		if acquired && ctx.Err() != nil {
			<-sem
			acquired = false
		}
		if !acquired {
			errs[i] = withHost(t, ctx.Err())
			report(Event{Host: t.String(), Done: true, Err: errs[i]})
			continue
		}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			start := time.Now()
			report(Event{Host: t.String()})
			err := fn(ctx, t)
			if err != nil {
				errs[i] = withHost(t, err)
			}
			report(Event{Host: t.String(), Done: true, Err: errs[i], Elapsed: time.Since(start)})
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// withHost prefixes err with the host unless it already names it.
func withHost(t Target, err error) error {
	if hostOf(err) == t.String() {
		return err
	}
	return fmt.Errorf("%s: %w", t, err)
}
