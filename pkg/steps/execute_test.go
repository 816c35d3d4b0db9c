package steps

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

func TestExecutorOrderAndParallelGroups(t *testing.T) {
	var mu sync.Mutex
	var order []string
	var running, maxRunning atomic.Int32
	record := func(name string) Func {
		return func(ctx context.Context, host string) error {
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
		}
	}
	p := &plan.Plan{Steps: []plan.Step{
		{Name: "a", Host: "h1", Parallel: true}, {Name: "a", Host: "h2", Parallel: true}, {Name: "a", Host: "h3", Parallel: true},
		{Name: "b", Host: "h1"}, {Name: "c"},
	}}
	var out bytes.Buffer
	x := &Executor{Steps: map[string]Func{"a": record("a"), "b": record("b"), "c": record("c")}, Parallel: 2, Out: &out}
	if err := x.Run(context.Background(), p); err != nil {
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

func TestExecutorStopsAtFailureAndReportsEveryHost(t *testing.T) {
	boom := errors.New("boom")
	ran := map[string]bool{}
	var mu sync.Mutex
	x := &Executor{Steps: map[string]Func{
		"a": func(_ context.Context, h string) error {
			mu.Lock()
			ran[h] = true
			mu.Unlock()
			if h != "ok" {
				return boom
			}
			return nil
		},
		"b": func(context.Context, string) error { t.Error("a step after a failed group ran"); return nil },
	}}
	p := &plan.Plan{Steps: []plan.Step{{Name: "a", Host: "x", Parallel: true}, {Name: "a", Host: "ok", Parallel: true}, {Name: "a", Host: "y", Parallel: true}, {Name: "b"}}}
	err := x.Run(context.Background(), p)
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

func TestExecutorUnknownStepAndCancel(t *testing.T) {
	x := &Executor{Steps: map[string]Func{}}
	if err := x.Run(context.Background(), &plan.Plan{Steps: []plan.Step{{Name: "nope"}}}); err == nil || !strings.Contains(err.Error(), "no implementation") {
		t.Errorf("unknown step: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	x = &Executor{Steps: map[string]Func{"a": func(context.Context, string) error { t.Error("ran after cancel"); return nil }}}
	if err := x.Run(ctx, &plan.Plan{Steps: []plan.Step{{Name: "a"}}}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled run: %v", err)
	}
}
