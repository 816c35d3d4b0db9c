package phases

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/slipway-dev/slipway/pkg/plan"
)

func TestRunnerOrderAndParallelGroups(t *testing.T) {
	var mu sync.Mutex
	var order []string
	var running, maxRunning atomic.Int32
	record := func(name string) Phase {
		return Phase{Name: name, Short: "records", Run: func(ctx context.Context, _ *Run, host string) error {
			n := running.Add(1)
			defer running.Add(-1)
			for {
				m := maxRunning.Load()
				if n <= m || maxRunning.CompareAndSwap(m, n) {
					break
				}
			}
			// Give the other members of a parallel group the chance to start.
			time.Sleep(20 * time.Millisecond)
			mu.Lock()
			order = append(order, name+"@"+host)
			mu.Unlock()
			return nil
		}}
	}
	p := &plan.Plan{Steps: []plan.Step{
		{Name: "a", Host: "h1", Parallel: true}, {Name: "a", Host: "h2", Parallel: true}, {Name: "a", Host: "h3", Parallel: true},
		{Name: "b", Host: "h1"}, {Name: "c"},
	}}
	var out bytes.Buffer
	x := &Runner{Parallel: 2, lookup: phasesOf(record("a"), record("b"), record("c"))}
	if err := x.Run(context.Background(), NewRun(Config{Log: &out}), p); err != nil {
		t.Fatal(err)
	}
	if maxRunning.Load() != 2 {
		t.Errorf("at most 2 steps may run at once and the group allows it: max %d", maxRunning.Load())
	}
	if got := strings.Join(order[3:], " "); got != "b@h1 c@" {
		t.Errorf("serial steps must follow the group in order, got %v", order)
	}
	for _, want := range []string{"[h2] a started", "[h1] b done in", "Done: 5 steps"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("progress lacks %q:\n%s", want, out.String())
		}
	}
}

func TestRunnerStopsAtFailureAndReportsEveryHost(t *testing.T) {
	boom := errors.New("boom")
	ran := map[string]bool{}
	var mu sync.Mutex
	x := &Runner{lookup: phasesOf(
		Phase{Name: "a", Run: func(_ context.Context, _ *Run, h string) error {
			mu.Lock()
			ran[h] = true
			mu.Unlock()
			if h != "ok" {
				return boom
			}
			return nil
		}},
		Phase{Name: "b", Run: func(context.Context, *Run, string) error { t.Error("a step after a failed group ran"); return nil }},
	)}
	p := &plan.Plan{Steps: []plan.Step{{Name: "a", Host: "x", Parallel: true}, {Name: "a", Host: "ok", Parallel: true}, {Name: "a", Host: "y", Parallel: true}, {Name: "b"}}}
	err := x.Run(context.Background(), NewRun(Config{}), p)
	var se *Error
	if !errors.As(err, &se) || !errors.Is(err, boom) {
		t.Fatalf("got %v, want step errors wrapping the cause", err)
	}
	for _, want := range []string{"step a on x failed: boom", "step a on y failed: boom"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if !ran["ok"] {
		t.Error("a failing host must not stop its group's other hosts")
	}
}

func TestRunnerUnknownPhaseAndCancel(t *testing.T) {
	ran := false
	x := &Runner{lookup: phasesOf(Phase{Name: "a", Run: func(context.Context, *Run, string) error { ran = true; return nil }})}
	err := x.Run(context.Background(), NewRun(Config{}), &plan.Plan{Steps: []plan.Step{{Name: "a"}, {Name: "nope", Host: "h1"}}})
	if err == nil || err.Error() != "step nope on h1 failed: no phase of this name" || ran {
		t.Errorf("a plan naming an unknown phase must fail before any step runs: %v (ran: %t)", err, ran)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	x = &Runner{lookup: phasesOf(Phase{Name: "a", Run: func(context.Context, *Run, string) error { t.Error("ran after cancel"); return nil }})}
	steps := []plan.Step{{Name: "a", Host: "h1", Parallel: true}, {Name: "a", Host: "h2", Parallel: true}}
	err = x.Run(ctx, NewRun(Config{}), &plan.Plan{Steps: steps})
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "step a on h2 failed: context canceled") {
		t.Errorf("cancelled run: %v", err)
	}
}

// phasesOf looks phases up among ps only.
func phasesOf(ps ...Phase) func(string) (Phase, bool) {
	return func(name string) (Phase, bool) {
		for _, p := range ps {
			if p.Name == name {
				return p, true
			}
		}
		return Phase{}, false
	}
}

// TestEveryStepHasAPhase walks every step name a plan can hold: each must name a registered
// phase with a description, and no phase may exist that no plan can name.
func TestEveryStepHasAPhase(t *testing.T) {
	for _, name := range plan.Names {
		p, ok := Lookup(name)
		if !ok {
			t.Errorf("plan step %q has no phase", name)
			continue
		}
		if p.Short == "" || p.Run == nil {
			t.Errorf("phase %q lacks a description or a run function", name)
		}
	}
	if got := len(All()); got != len(plan.Names) || len(registry) != len(plan.Names) {
		t.Errorf("%d phases registered, %d listed in order, for %d plan step names", len(registry), got, len(plan.Names))
	}
}
