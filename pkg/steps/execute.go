// Package steps carries out an apply plan: the executor runs named steps in order (parallel
// groups at once, with a concurrency limit), reports each step's host, status and elapsed time,
// and stops at the first failure with the host, step and cause. The step implementations in this
// package do the work on hosts over SSH and on the cluster through client-go.
package steps

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/slipway-dev/slipway/pkg/plan"
)

// Func runs one step on one host ("" for cluster-wide steps).
type Func func(ctx context.Context, host string) error

// Error is a failed step.
type Error struct {
	Step string
	Host string
	Err  error
}

func (e *Error) Error() string {
	if e.Host == "" {
		return fmt.Sprintf("step %s failed: %v", e.Step, e.Err)
	}
	return fmt.Sprintf("step %s on %s failed: %v", e.Step, e.Host, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Executor runs plans.
type Executor struct {
	// Steps maps step names to implementations.
	Steps map[string]Func
	// Parallel bounds how many hosts a parallel group runs on at once.
	Parallel int
	// Out receives progress lines.
	Out io.Writer
	// KillAt, for interruption tests, names a step ("name" or "name@host") at whose start the
	// process kills itself with SIGKILL, as an operator's Ctrl-\ or a crash would. It is read
	// from SLIPWAY_TEST_KILL_AT by the CLI.
	KillAt string

	mu    sync.Mutex
	start time.Time
}

// Run executes the steps of p in order. Consecutive parallel steps with the same name form a
// group that runs on its hosts at once; every host's error in a group is reported.
func (x *Executor) Run(ctx context.Context, p *plan.Plan) error {
	x.start = time.Now()
	for i := 0; i < len(p.Steps); {
		j := i + 1
		for j < len(p.Steps) && p.Steps[i].Parallel && p.Steps[j].Parallel && p.Steps[j].Name == p.Steps[i].Name {
			j++
		}
		if err := x.group(ctx, p.Steps[i:j]); err != nil {
			return err
		}
		i = j
	}
	x.printf("Done: %d steps in %s\n", len(p.Steps), x.elapsed())
	return nil
}

func (x *Executor) group(ctx context.Context, group []plan.Step) error {
	limit := x.Parallel
	if limit <= 0 {
		limit = 10
	}
	sem := make(chan struct{}, limit)
	errs := make([]error, len(group))
	var wg sync.WaitGroup
	for i, s := range group {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			errs[i] = x.one(ctx, s)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (x *Executor) one(ctx context.Context, s plan.Step) error {
	fn, ok := x.Steps[s.Name]
	if !ok {
		return &Error{Step: s.Name, Host: s.Host, Err: errors.New("no implementation for this step")}
	}
	if err := ctx.Err(); err != nil {
		return &Error{Step: s.Name, Host: s.Host, Err: err}
	}
	x.maybeKill(s)
	x.printf("%s %s started\n", x.stamp(), label(s))
	began := time.Now()
	err := fn(ctx, s.Host)
	took := time.Since(began).Round(100 * time.Millisecond)
	if err != nil {
		x.printf("%s %s FAILED after %s\n", x.stamp(), label(s), took)
		return &Error{Step: s.Name, Host: s.Host, Err: err}
	}
	x.printf("%s %s done in %s\n", x.stamp(), label(s), took)
	return nil
}

func (x *Executor) maybeKill(s plan.Step) {
	if x.KillAt == "" {
		return
	}
	name, host, _ := strings.Cut(x.KillAt, "@")
	if name == s.Name && (host == "" || host == s.Host) {
		x.printf("%s test hook: killing slipway at the start of %s\n", x.stamp(), label(s))
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	}
}

func label(s plan.Step) string {
	if s.Host == "" {
		return s.Name
	}
	return "[" + s.Host + "] " + s.Name
}

func (x *Executor) stamp() string { return "[" + fmt.Sprintf("%6s", x.elapsed()) + "]" }

func (x *Executor) elapsed() string {
	return time.Since(x.start).Round(time.Second).String()
}

func (x *Executor) printf(format string, args ...any) {
	if x.Out == nil {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	fmt.Fprintf(x.Out, format, args...)
}
