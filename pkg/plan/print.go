package plan

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/slipway-dev/slipway/pkg/internal/plural"
)

// Print writes the plan for humans, one step per line, like a terraform plan.
func Print(w io.Writer, cluster, version string, p *Plan) {
	for _, warn := range p.Warnings {
		fmt.Fprintf(w, "Warning: %s\n", warn)
	}
	if p.Empty() {
		fmt.Fprintf(w, "Cluster %q (Kubernetes v%s) is up to date: nothing to do.\n", cluster, version)
		printPools(w, p.Pools)
		return
	}
	fmt.Fprintf(w, "Plan for cluster %q (Kubernetes v%s): %s\n", cluster, version, plural.Count(len(p.Steps), "step"))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for i, s := range p.Steps {
		host := s.Host
		if host == "" {
			host = "(cluster)"
		}
		fmt.Fprintf(tw, "  %2d. %s\t%s\t%s\n", i+1, s.Name, host, s.Reason)
	}
	tw.Flush()
	printPools(w, p.Pools)
	if a := p.Addons; a != nil {
		fmt.Fprintln(w, "Objects of addons.path:")
		for _, l := range []struct {
			mark string
			objs []AddonObject
		}{{"+", a.Add}, {"~", a.Change}, {"-", a.Prune}} {
			for _, o := range l.objs {
				ref := o.Name
				if o.Namespace != "" {
					ref = o.Namespace + "/" + o.Name
				}
				fmt.Fprintf(w, "  %s %s %s (%s)\n", l.mark, o.Kind, ref, o.Source)
			}
		}
	}
}

// printPools lists where the live worker pools differ from the manifest, and what apply does.
func printPools(w io.Writer, changes []PoolChange) {
	if len(changes) == 0 {
		return
	}
	fmt.Fprintln(w, "Worker pools, live against the manifest:")
	for _, c := range changes {
		fmt.Fprintf(w, "  %s\n", c)
	}
}
