package phases

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/slipway-dev/slipway/pkg/plan"
	"github.com/slipway-dev/slipway/pkg/progress"
)

// TestRunnerProgressJSON: with --log-format json every progress line of a run is one JSON
// object that names its step and host: the step's start and end, what a phase logged on the way
// (with the step it ran in, also within a parallel group), a failure at level error, and nothing
// else.
func TestRunnerProgressJSON(t *testing.T) {
	var out bytes.Buffer
	w := progress.NewWriter(&out)
	w.SetJSON()
	logs := func(name string, fail bool) Phase {
		return Phase{Name: name, Short: "logs", Run: func(_ context.Context, r *Run, host string) error {
			r.Logf(host, "did %s", name)
			if fail {
				return errors.New("no luck")
			}
			return nil
		}}
	}
	p := &plan.Plan{Steps: []plan.Step{
		{Name: "a", Host: "h1", Parallel: true}, {Name: "a", Host: "h2", Parallel: true}, {Name: "b"}, {Name: "c", Host: "h1"},
	}}
	x := &Runner{Parallel: 2, lookup: phasesOf(logs("a", false), logs("b", false), logs("c", true))}
	if err := x.Run(context.Background(), NewRun(Config{Log: w}), p); err == nil {
		t.Fatal("the failing step did not fail the run")
	}
	type key struct{ level, host, step, message string }
	got := map[key]bool{}
	for _, line := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
		var e progress.Entry
		if err := json.Unmarshal([]byte(line), &e); err != nil || e.Time.IsZero() {
			t.Fatalf("not an entry with a time (%v): %q", err, line)
		}
		got[key{e.Level, e.Host, e.Step, e.Message}] = true
	}
	for _, want := range []key{
		{"info", "h1", "a", "started"}, {"info", "h2", "a", "started"},
		{"info", "h1", "a", "did a"}, {"info", "h2", "a", "did a"},
		{"info", "", "b", "started"}, {"info", "", "b", "did b"},
		{"info", "h1", "c", "did c"}, {"error", "h1", "c", "failed after 0s: no luck"},
	} {
		if !got[want] {
			t.Errorf("no entry %+v in:\n%s", want, out.String())
		}
	}
	if len(got) != 12 {
		t.Errorf("%d distinct entries, want 12 (3 steps of a group of 2, 2 more steps, each started, logged and ended):\n%s", len(got), out.String())
	}
}
