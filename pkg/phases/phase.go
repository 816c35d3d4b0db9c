// Package phases carries out an apply plan. A phase is a value: the name a plan's steps use, a
// one-line description, and the function that does the work on one host (or on the cluster).
// Each phase is defined and registered in a file of its own, which also declares the narrow
// interface through which it reads the run, so that file alone says what the phase does and
// what it touches. The Runner executes a plan step by step with the registered phases: parallel
// groups at once (bounded by --parallel), each step's host, status and time reported, and the
// first failing group ends the run with every host's error. The package changes hosts and the
// cluster; it observes nothing for planning (that is the probe's job) and decides nothing (that
// is plan.Build's).
package phases

import (
	"context"
	"fmt"
	"slices"

	"github.com/slipway-dev/slipway/pkg/plan"
)

// Phase is one kind of step of a plan, kubeadm-workflow style.
type Phase struct {
	// Name is the plan's step name (plan.Step*).
	Name string
	// Short says in one line what the phase does.
	Short string
	// Run does the work for one step: on host, or on the cluster when host is "".
	Run func(ctx context.Context, r *Run, host string) error
}

// registry holds every phase by name. register fills it while the package initialises, so it
// is complete before anything reads it and never changes afterwards.
var registry = map[string]Phase{}

// register adds p to the phases a plan can use. A name that no plan can hold, or one defined
// twice, is a programming error caught when the package initialises, by every test and run.
func register(p Phase) Phase {
	if !slices.Contains(plan.Names, p.Name) {
		panic(fmt.Sprintf("phase %q is not a plan step name (plan.Names)", p.Name))
	}
	if _, dup := registry[p.Name]; dup {
		panic(fmt.Sprintf("phase %q is defined twice", p.Name))
	}
	if p.Run == nil || p.Short == "" {
		panic(fmt.Sprintf("phase %q needs a description and a run function", p.Name))
	}
	registry[p.Name] = p
	return p
}

// Lookup returns the phase a step names.
func Lookup(name string) (Phase, bool) {
	p, ok := registry[name]
	return p, ok
}

// All returns every phase, in the order of plan.Names.
func All() []Phase {
	out := make([]Phase, 0, len(registry))
	for _, name := range plan.Names {
		if p, ok := registry[name]; ok {
			out = append(out, p)
		}
	}
	return out
}
