package pools

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/kube"
)

// ConsoleLines is how much of a server's console log a timeout reports.
const ConsoleLines = 20

// Console reads the last lines of the console log of a Machine's server.
type Console func(ctx context.Context, m *v1alpha1.Machine, lines int) (string, error)

// Options are how Wait waits.
type Options struct {
	// Timeout bounds the whole wait.
	Timeout time.Duration
	// Progress receives a line each time a Machine reaches a step (server ACTIVE, address,
	// Node registered, Ready); nil prints nothing.
	Progress func(machine, line string)
	// Console reads the console logs that a timeout reports; nil reports none.
	Console Console
}

// errFailed ends a wait early: a Machine hit a terminal error (status.errorReason), which the
// controller neither retries nor replaces until the Machine's spec changes. A Machine that
// failed otherwise (its server vanished, its Node never joined) is replaced, so the wait goes on.
var errFailed = errors.New("a Machine failed")

// Wait polls the named MachineDeployments of namespace until each is Done, and returns them as
// last seen. A Machine that was Ready at the first look reports nothing, so waiting on pools
// that are already Ready returns at once and quietly. A MachineDeployment that does not exist
// ends the wait at once, and so does a failed Machine. When the timeout passes (or a Machine
// failed), the error names every Machine that is not Ready, with its phase, its conditions, its
// error and the tail of its server's console log.
func Wait(ctx context.Context, c *kube.Client, namespace string, names []string, o Options) ([]Pool, error) {
	var (
		last    []Pool
		lastErr error
		seen    = map[string]int{} // milestones reported, by Machine
		first   = true
	)
	progress := func(machine, format string, args ...any) {
		if o.Progress != nil {
			o.Progress(machine, fmt.Sprintf(format, args...))
		}
	}
	err := wait.PollUntilContextTimeout(ctx, kube.Poll, o.Timeout, true, func(context.Context) (bool, error) {
		// Each look gets the run's context, not the wait's: the wait's deadline would cut the
		// last look short and leave an error of its own making as the last one seen.
		sctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		pools, err := Status(sctx, c, namespace, names)
		if err != nil {
			lastErr = err // the API may be briefly unavailable; the timeout reports it
			return false, nil
		}
		last, lastErr = pools, nil
		done := true
		for _, p := range pools {
			if p.Missing {
				return false, fmt.Errorf("MachineDeployment %s/%s does not exist (the machine-controller's CRDs may be missing)", namespace, p.Name)
			}
			for _, m := range p.Machines {
				n, known := seen[m.Name]
				switch {
				case !known && first && m.Ready:
					n = len(m.milestones)
				case !known:
					progress(m.Name, "Machine of pool %s created, phase %s", p.Name, orNone(m.Phase))
				}
				for ; n < len(m.milestones); n++ {
					progress(m.Name, "%s after %s", m.milestones[n].what, m.milestones[n].after.Round(time.Second))
				}
				seen[m.Name] = n
				if m.failure != "" {
					return false, errFailed
				}
			}
			done = done && p.Done()
		}
		first = false
		return done, nil
	})
	switch {
	case err == nil:
		return last, nil
	case ctx.Err() != nil:
		return last, fmt.Errorf("waiting for the worker pools: %w", ctx.Err())
	case errors.Is(err, errFailed):
		return last, report(ctx, o, last, nil, "a Machine of the worker pools failed")
	case !wait.Interrupted(err):
		return last, err
	}
	return last, report(ctx, o, last, lastErr, fmt.Sprintf("the worker pools were not Ready after %s", o.Timeout))
}

// report describes, under headline, every pool that is not Done and each of its Machines that
// is not Ready, with the tail of the Machine's console log.
func report(ctx context.Context, o Options, pools []Pool, lastErr error, headline string) error {
	var b strings.Builder
	b.WriteString(headline)
	if lastErr != nil {
		fmt.Fprintf(&b, " (last error: %v)", lastErr)
	}
	if pools == nil {
		b.WriteString(": their status could never be read")
	}
	// The console logs get a deadline of their own: the wait's has passed.
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	for _, p := range pools {
		if p.Done() {
			continue
		}
		fmt.Fprintf(&b, "\npool %s: %d of %d Machines Ready", p.Name, p.Ready, p.Replicas)
		if n := int32(len(p.Machines)); n != p.Replicas {
			fmt.Fprintf(&b, " (%d Machines exist)", n)
		} else if p.Ready == p.Replicas {
			b.WriteString(" (the machine-controller has not yet reported the MachineDeployment's rollout complete)")
		}
		for _, m := range p.Machines {
			if m.Ready {
				continue
			}
			fmt.Fprintf(&b, "\n  Machine %s: phase %s, created %s ago; %s", m.Name, orNone(m.Phase), m.Elapsed, conditions(m.conditions))
			if m.failure != "" {
				fmt.Fprintf(&b, "; error %s", m.failure)
			}
			if m.ProviderID != "" {
				fmt.Fprintf(&b, "; server %s", m.ProviderID)
			}
			if m.Address != "" {
				fmt.Fprintf(&b, ", address %s", m.Address)
			}
			if m.Node != "" {
				fmt.Fprintf(&b, ", Node %s", m.Node)
			}
			b.WriteString(consoleTail(cctx, o.Console, m))
		}
	}
	return errors.New(b.String())
}

// consoleTail is the tail of m's console log for an error, or why there is none.
func consoleTail(ctx context.Context, console Console, m Machine) string {
	if console == nil {
		return "\n    (its console log is not available: no cloud credentials to read it)"
	}
	out, err := console(ctx, m.object, ConsoleLines)
	if err != nil {
		return fmt.Sprintf("\n    (its console log could not be read: %v)", err)
	}
	lines := strings.Split(strings.TrimRight(clean(out), "\n"), "\n")
	if len(lines) > ConsoleLines {
		lines = lines[len(lines)-ConsoleLines:]
	}
	if len(lines) == 1 && strings.TrimSpace(lines[0]) == "" {
		return "\n    (its console log is empty)"
	}
	return fmt.Sprintf("\n    last %d lines of its console log:\n      | %s", len(lines), strings.Join(lines, "\n      | "))
}

var (
	// bootstrapToken matches a kubeadm bootstrap token (id.secret), which a failing join
	// could print on the console.
	bootstrapToken = regexp.MustCompile(`\b[a-z0-9]{6}\.[a-z0-9]{16}\b`)
	// escapes are terminal control sequences, which would garble the error.
	escapes = regexp.MustCompile(`\x1b\[[0-9;?]*[ -/]*[@-~]`)
)

// clean makes console output fit for an error message: no bootstrap tokens, no control
// sequences or characters other than tabs and newlines.
func clean(s string) string {
	s = bootstrapToken.ReplaceAllString(s, "<redacted bootstrap token>")
	s = escapes.ReplaceAllString(s, "")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' || (r >= ' ' && r != 0x7f) {
			return r
		}
		return -1
	}, s)
}

func orNone(phase string) string {
	if phase == "" {
		return "(none yet)"
	}
	return phase
}
