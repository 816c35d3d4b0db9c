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
func hostBreakdown(host string, entries []progress.Entry) (hostUpgrade, bool) {
	h := hostUpgrade{host: host}
	var drained, kubeadmDone, lastMark time.Time
	var current *component
	var currentStart time.Time
	closeCurrent := func(at time.Time) {
		if current != nil {
			current.total = at.Sub(currentStart)
			h.components = append(h.components, *current)
			current = nil
		}
	}
	for _, e := range entries {
		msg := e.Message
		if m := stageRE.FindStringSubmatch(msg); m != nil && isStage(m[1]) {
			d, err := time.ParseDuration(m[2])
			if err == nil {
				h.stages = append(h.stages, span{m[1], d})
			}
			switch {
			case m[1] == "cordoned and drained":
				drained = e.Time
			case strings.HasPrefix(m[1], "kubeadm upgrade ") && strings.HasSuffix(m[1], " done"):
				kubeadmDone = e.Time
				closeCurrent(e.Time)
				if !lastMark.IsZero() {
					h.after = e.Time.Sub(lastMark)
				}
			}
			continue
		}
		if drained.IsZero() || !kubeadmDone.IsZero() {
			continue
		}
		switch {
		case movedRE.MatchString(msg):
			if current == nil && len(h.components) == 0 {
				h.before = e.Time.Sub(drained)
			}
			closeCurrent(e.Time)
			current, currentStart = &component{name: movedRE.FindStringSubmatch(msg)[1]}, e.Time
			lastMark = time.Time{}
		case upgradedRE.MatchString(msg):
			if current != nil && upgradedRE.FindStringSubmatch(msg)[1] == current.name {
				current.up = e.Time.Sub(currentStart)
				lastMark = e.Time
			}
		case skippedRE.MatchString(msg):
			h.skipped = append(h.skipped, skippedRE.FindStringSubmatch(msg)[1])
		}
	}
	// A component still open here had no "done" stage after it: the step failed in kubeadm.
	if kubeadmDone.IsZero() {
		return h, len(h.stages) > 0
	}
	// The part after the last component is counted once, in after, not also in its total.
	if n := len(h.components); n > 0 && h.after > 0 {
		h.components[n-1].total -= h.after
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
