package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"

	"github.com/slipway-dev/slipway/pkg/progress"
)

// The upgrade's breakdown reads `slipway apply --verbose --log-format json`: every line a host
// printed (kubeadm's among them) and every stage of the upgrade step is an entry with its time
// and host, so where each node's minutes go can be read off without a second run.
var (
	// kubeadm upgrade moves one component's new static pod manifest into place ("Moved" up to
	// v1.36, "Moving" from v1.37 on), then waits
	// for the kubelet to restart it and for its mirror pod to show the new hash.
	movedRE    = regexp.MustCompile(`^\[upgrade/staticpods\] Mov(?:ed|ing) new manifest to "[^"]*/([a-z-]+)\.yaml"`)
	upgradedRE = regexp.MustCompile(`^\[upgrade/staticpods\] Component "([a-z-]+)" upgraded successfully`)
	skippedRE  = regexp.MustCompile(`^\[upgrade/staticpods\] [Cc]urrent and new manifests of ([a-z-]+) are equal`)
	// A stage line of slipway's upgrade step: what was done, and the time since the last stage.
	stageRE = regexp.MustCompile(`^(.*) \(([0-9hms.]+)\)$`)
)

// hostUpgrade is what one node's upgrade step spent, in order.
type hostUpgrade struct {
	host string
	// stages are slipway's stage lines: what was done and how long it took.
	stages []span
	// components are kubeadm's static pods, each from its manifest's move to the next move (or
	// to kubeadm's end); up is the part until kubeadm saw the new pod.
	components []component
	// before is kubeadm's time until the first manifest moved (preflight, images, the etcd
	// backup); after is its time after the last component (the addons, configuration uploads).
	before, after time.Duration
	skipped       []string
}

type span struct {
	what string
	d    time.Duration
}

type component struct {
	name  string
	total time.Duration
	up    time.Duration // 0 when kubeadm did not say it was up
}

// total is the node's whole upgrade step: the sum of its stages.
func (h hostUpgrade) total() time.Duration {
	var t time.Duration
	for _, s := range h.stages {
		t += s.d
	}
	return t
}

// breakdown reads the JSON progress of an upgrade and returns each upgraded node's figures, in
// the order the nodes were upgraded. Lines that are not entries are skipped.
func breakdown(r io.Reader) ([]hostUpgrade, error) {
	byHost := map[string][]progress.Entry{}
	var order []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		var e progress.Entry
		if json.Unmarshal(sc.Bytes(), &e) != nil || e.Host == "" {
			continue
		}
		if _, seen := byHost[e.Host]; !seen {
			order = append(order, e.Host)
		}
		byHost[e.Host] = append(byHost[e.Host], e)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	var out []hostUpgrade
	for _, host := range order {
		if h, ok := hostBreakdown(host, byHost[host]); ok {
			out = append(out, h)
		}
	}
	return out, nil
}

// hostBreakdown returns one node's figures, or false when its entries hold no upgrade step.
// kubeadm's part is cut at its own lines: each component runs from its manifest's move to the
// next one's, the last to the line that says it is up (the rest is after).
func hostBreakdown(host string, entries []progress.Entry) (hostUpgrade, bool) {
	h := hostUpgrade{host: host}
	type mark struct {
		name      string
		moved, up time.Time
	}
	var marks []mark
	var drained, done time.Time
	for _, e := range entries {
		if m := stageRE.FindStringSubmatch(e.Message); m != nil && isStage(m[1]) {
			if d, err := time.ParseDuration(m[2]); err == nil {
				h.stages = append(h.stages, span{m[1], d})
			}
			switch {
			case m[1] == "cordoned and drained":
				drained = e.Time
			case strings.HasPrefix(m[1], "kubeadm upgrade ") && strings.HasSuffix(m[1], " done"):
				done = e.Time
			}
			continue
		}
		if drained.IsZero() || !done.IsZero() {
			continue // not kubeadm's output
		}
		if m := movedRE.FindStringSubmatch(e.Message); m != nil {
			marks = append(marks, mark{name: m[1], moved: e.Time})
		} else if m := upgradedRE.FindStringSubmatch(e.Message); m != nil && len(marks) > 0 && marks[len(marks)-1].name == m[1] {
			marks[len(marks)-1].up = e.Time
		} else if m := skippedRE.FindStringSubmatch(e.Message); m != nil {
			h.skipped = append(h.skipped, m[1])
		}
	}
	if len(h.stages) == 0 {
		return h, false
	}
	if len(marks) > 0 {
		h.before = marks[0].moved.Sub(drained)
	}
	for i, m := range marks {
		c := component{name: m.name}
		if !m.up.IsZero() {
			c.up = m.up.Sub(m.moved)
		}
		switch {
		case i+1 < len(marks):
			c.total = marks[i+1].moved.Sub(m.moved)
		case done.IsZero():
			// kubeadm failed in this component: it has no end to measure.
			continue
		case !m.up.IsZero():
			c.total, h.after = c.up, done.Sub(m.up)
		default:
			c.total = done.Sub(m.moved)
		}
		h.components = append(h.components, c)
	}
	return h, true
}

// isStage reports whether a message is one of the upgrade step's stage lines (stages() in
// pkg/phases), rather than a host's own output that happens to end in parentheses.
func isStage(what string) bool {
	for _, prefix := range []string{"cordoned and drained", "kubeadm upgrade ", "kubelet restarted", "kube-apiserver Ready", "controller manager and scheduler Ready", "their leaders at work"} {
		if strings.HasPrefix(what, prefix) {
			return true
		}
	}
	return false
}

// printBreakdown writes the figures: per node its step total, its stages, and kubeadm's parts.
func printBreakdown(w io.Writer, hosts []hostUpgrade) {
	for _, h := range hosts {
		fmt.Fprintf(w, "  %-52s %8s\n", h.host+": upgrade step", secs(h.total()))
		for _, s := range h.stages {
			fmt.Fprintf(w, "    %-50s %8s\n", s.what, secs(s.d))
		}
		if len(h.components) == 0 {
			continue
		}
		fmt.Fprintf(w, "    %-50s %8s\n", "kubeadm: before the first manifest moved", secs(h.before))
		for _, c := range h.components {
			up := "not seen up"
			if c.up > 0 {
				up = "up after " + secs(c.up)
			}
			fmt.Fprintf(w, "    %-50s %8s  (%s)\n", "kubeadm: "+c.name, secs(c.total), up)
		}
		fmt.Fprintf(w, "    %-50s %8s\n", "kubeadm: after the last component", secs(h.after))
		if len(h.skipped) > 0 {
			fmt.Fprintf(w, "    kubeadm left unchanged: %s\n", strings.Join(h.skipped, ", "))
		}
	}
}
