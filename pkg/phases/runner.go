package phases

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/slipway-dev/slipway/pkg/internal/plural"
	"github.com/slipway-dev/slipway/pkg/plan"
	"github.com/slipway-dev/slipway/pkg/progress"
	"github.com/slipway-dev/slipway/pkg/ssh"
)

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

// Runner executes plans with the registered phases.
type Runner struct {
	// Parallel bounds how many hosts a parallel group runs on at once (0: ssh.DefaultParallel).
	Parallel int
	// KillAt, for interruption tests, names a step ("name" or "name@host") at whose start the
	// process kills itself with SIGKILL, as an operator's Ctrl-\ or a crash would. It is read
	// from SLIPWAY_TEST_KILL_AT by the CLI.
	KillAt string

	// lookup finds a step's phase; nil means Lookup. Tests set it to run phases of their own.
	lookup func(name string) (Phase, bool)
	start  time.Time
}

// Run executes the steps of p in order, with r as the phases' shared state; progress goes to
// r's log. Consecutive parallel steps with the same name form a group that runs on its hosts
// at once; every host's error in a group is reported. A step that names no phase fails the
// plan before anything runs.
func (x *Runner) Run(ctx context.Context, r *Run, p *plan.Plan) error {
	phases := make([]Phase, len(p.Steps))
	var missing []error
	for i, s := range p.Steps {
		ph, ok := x.phase(s.Name)
		if !ok {
			missing = append(missing, &Error{Step: s.Name, Host: s.Host, Err: errors.New("no phase of this name")})
		}
		phases[i] = ph
	}
	if err := errors.Join(missing...); err != nil {
		return err
	}
	x.start = time.Now()
	for i := 0; i < len(p.Steps); {
		j := i + 1
		for j < len(p.Steps) && p.Steps[i].Parallel && p.Steps[j].Parallel && p.Steps[j].Name == p.Steps[i].Name {
			j++
		}
		// Every step of a group has the same name, so the same phase.
		ph := phases[i]
		r.running(p.Steps[i].Name)
		err := ssh.Each(ctx, p.Steps[i:j], x.Parallel, func(ctx context.Context, s plan.Step) error {
			return x.one(ctx, r, ph, s)
		})
		if err != nil {
			return err
		}
		i = j
	}
	r.running("")
	done := fmt.Sprintf("%s in %s", plural.Count(len(p.Steps), "step"), x.elapsed())
	r.log(progress.Entry{Message: "done: " + done}, "Done: "+done+"\n")
	return nil
}

func (x *Runner) phase(name string) (Phase, bool) {
	if x.lookup != nil {
		return x.lookup(name)
	}
	return Lookup(name)
}

func (x *Runner) one(ctx context.Context, r *Run, ph Phase, s plan.Step) error {
	if err := ctx.Err(); err != nil {
		return &Error{Step: s.Name, Host: s.Host, Err: err}
	}
	x.maybeKill(r, s)
	r.log(progress.Entry{Host: s.Host, Step: s.Name, Message: "started"}, fmt.Sprintf("%s %s started\n", x.stamp(), label(s)))
	began := time.Now()
	err := ph.Run(ctx, r, s.Host)
	took := time.Since(began).Round(100 * time.Millisecond)
	if err != nil {
		r.log(progress.Entry{Level: progress.Error, Host: s.Host, Step: s.Name, Message: fmt.Sprintf("failed after %s: %v", took, err)},
			fmt.Sprintf("%s %s FAILED after %s\n", x.stamp(), label(s), took))
		return &Error{Step: s.Name, Host: s.Host, Err: err}
	}
	r.log(progress.Entry{Host: s.Host, Step: s.Name, Message: "done in " + took.String()}, fmt.Sprintf("%s %s done in %s\n", x.stamp(), label(s), took))
	return nil
}

func (x *Runner) maybeKill(r *Run, s plan.Step) {
	if x.KillAt == "" {
		return
	}
	name, host, _ := strings.Cut(x.KillAt, "@")
	if name == s.Name && (host == "" || host == s.Host) {
		r.log(progress.Entry{Host: s.Host, Step: s.Name, Message: "test hook: killing slipway"},
			fmt.Sprintf("%s test hook: killing slipway at the start of %s\n", x.stamp(), label(s)))
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	}
}

func label(s plan.Step) string {
	if s.Host == "" {
		return s.Name
	}
	return "[" + s.Host + "] " + s.Name
}

func (x *Runner) stamp() string { return "[" + fmt.Sprintf("%6s", x.elapsed()) + "]" }

func (x *Runner) elapsed() string {
	return time.Since(x.start).Round(time.Second).String()
}
