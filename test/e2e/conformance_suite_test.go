package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// The Kubernetes conformance suite (issue 22) against a cluster that slipway built: e2e.test,
// ginkgo and the test images come from test/conformance/build.sh (cached), the images are pushed
// to the sandbox's registry under their upstream names (every node mirrors registry.k8s.io to
// it), and the suite runs from this machine through the cluster's API endpoint.

// conformanceSubsetFile lists the specs the CI run focuses on, one full spec text a line.
const conformanceSubsetFile = "test/conformance/subset.txt"

// conformanceOptions choose what a run of the suite runs and where its reports go.
type conformanceOptions struct {
	// Full runs every [Conformance] spec; otherwise the specs of SpecsFile.
	Full bool
	// SpecsFile lists the specs to run, one full spec text a line, relative to the repository's
	// root: conformanceSubsetFile (CI's), or another list such as the failures of a full run.
	SpecsFile string
	// Procs is ginkgo's parallelism; the [Serial] specs run alone at the end.
	Procs int
	// ReportDir receives junit.xml, summary.txt and summary.json.
	ReportDir string
	// Timeout bounds the whole suite.
	Timeout time.Duration
	// NonBlockingTaints are taints besides the control-plane one under which a node does not
	// hold the suite back at its start (e2e.test's --non-blocking-taints): the cloud provider's
	// uninitialized taint on control planes that are not servers of the cloud, say.
	NonBlockingTaints []string
}

// conformanceSubsetOptions run CI's subset with 4 ginkgo processes within 30 minutes, its
// reports in test/conformance/results.
func conformanceSubsetOptions() conformanceOptions {
	return conformanceOptions{SpecsFile: conformanceSubsetFile, Procs: 4, Timeout: 30 * time.Minute,
		ReportDir: filepath.Join("..", "conformance", "results")}
}

// conformanceSummary is what a run of the suite came to, from its JUnit report.
type conformanceSummary struct {
	Version string   `json:"kubernetesVersion"`
	Focus   string   `json:"focus"`
	Procs   int      `json:"procs"`
	Specs   int      `json:"specs"`
	Passed  int      `json:"passed"`
	Failed  []string `json:"failed"`
	Skipped int      `json:"skipped"`
	// SkipReasons are the skipped specs with what they said.
	SkipReasons []string      `json:"skipReasons,omitempty"`
	Duration    time.Duration `json:"duration"`
	Messages    []string      `json:"-"`
}

func (s conformanceSummary) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Kubernetes conformance, %s, focus %s, %d ginkgo processes\n", s.Version, s.Focus, s.Procs)
	fmt.Fprintf(&b, "specs run: %d, passed: %d, failed: %d, skipped: %d, time: %s\n", s.Specs, s.Passed, len(s.Failed), s.Skipped, s.Duration.Round(time.Second))
	for _, r := range s.SkipReasons {
		fmt.Fprintf(&b, "SKIPPED %s\n", r)
	}
	for i, f := range s.Failed {
		fmt.Fprintf(&b, "FAILED %s\n", f)
		if i < len(s.Messages) && s.Messages[i] != "" {
			fmt.Fprintf(&b, "    %s\n", strings.ReplaceAll(s.Messages[i], "\n", "\n    "))
		}
	}
	return b.String()
}

// conformanceSuite is the built suite: e2e.test and ginkgo, and the images' OCI layout.
type conformanceSuite struct {
	bin, layout, kubectl string
}

// buildConformance builds (or finds in the cache) the suite for the current version and
// kubectl of the same release. The first build takes about 20 minutes; .ci/run builds it
// before the tests.
func buildConformance(t *testing.T) conformanceSuite {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	run := func(script string, args ...string) string {
		cmd := exec.Command(filepath.Join(root, script), args...)
		cmd.Dir = root
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", script, strings.Join(args, " "), err, tailLines(stderr.String(), 30))
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		return lines[len(lines)-1]
	}
	bin := run("test/conformance/build.sh", current)
	kubeBin := run("test/kube/build.sh", current, "kubectl")
	return conformanceSuite{bin: bin, layout: filepath.Join(filepath.Dir(bin), "images", "oci"), kubectl: filepath.Join(kubeBin, "kubectl")}
}

// pushConformanceImages pushes the suite's images to the sandbox's registry under their upstream
// paths: registry.k8s.io/e2e-test-images/agnhost:2.63.0 becomes <registry>/e2e-test-images/
// agnhost:2.63.0, which is what a node's containerd asks its registry.k8s.io mirror for.
func (h *harness) pushConformanceImages(s conformanceSuite) {
	h.t.Helper()
	p, err := layout.FromPath(s.layout)
	if err != nil {
		h.t.Fatalf("the conformance images (test/conformance/build.sh): %v", err)
	}
	idx, err := p.ImageIndex()
	if err != nil {
		h.t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		h.t.Fatal(err)
	}
	host := strings.TrimPrefix(h.sb.Assets.Registry, "http://")
	for _, d := range im.Manifests {
		ref := d.Annotations["io.containerd.image.name"]
		path, ok := strings.CutPrefix(ref, "registry.k8s.io/")
		if !ok {
			h.t.Fatalf("conformance image %q is not under registry.k8s.io: build it with the upstream registry (no CONFORMANCE_REGISTRY)", ref)
		}
		img, err := idx.Image(d.Digest)
		if err != nil {
			h.t.Fatal(err)
		}
		to, err := name.ParseReference(host+"/"+path, name.Insecure)
		if err != nil {
			h.t.Fatal(err)
		}
		start := time.Now()
		if err := remote.Write(to, img); err != nil {
			h.t.Fatalf("pushing %s to the sandbox registry: %v", ref, err)
		}
		h.t.Logf("pushed %s to the sandbox registry in %s", ref, time.Since(start).Round(100*time.Millisecond))
	}
}

// conformanceSubset reads the spec texts of a list such as conformanceSubsetFile.
func conformanceSubset(t *testing.T, file string) []string {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", file))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var names []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line != "" && !strings.HasPrefix(line, "#") {
			names = append(names, line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return names
}

// subsetFocus is a focus that matches exactly the given spec texts.
func subsetFocus(names []string) string {
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = regexp.QuoteMeta(n)
	}
	// Not anchored at the start: ginkgo matches the focus against the spec's full text, which
	// does not begin with the first container's text. The dry run checks the selection.
	return "(" + strings.Join(quoted, "|") + ")$"
}

// isSpec reports whether a JUnit case is the spec with full text name: ginkgo names a case
// "[It] <full text>", followed by the spec's labels in brackets when it has any.
func isSpec(caseName, name string) bool {
	text := specText(caseName)
	return text == name || strings.HasPrefix(text, name+" [")
}

// runConformance runs the suite against the cluster of kubeconfig and returns its summary; it
// fails the test when a spec fails, or when the subset names a spec the suite does not have.
func (h *harness) runConformance(s conformanceSuite, kubeconfig string, o conformanceOptions) conformanceSummary {
	h.t.Helper()
	focus, label := `\[Conformance\]`, "every [Conformance] spec"
	var subset []string
	if !o.Full {
		subset = conformanceSubset(h.t, o.SpecsFile)
		if len(subset) == 0 {
			h.t.Fatalf("%s names no spec", o.SpecsFile)
		}
		focus, label = subsetFocus(subset), fmt.Sprintf("the %d specs of %s", len(subset), o.SpecsFile)
	}
	if err := os.MkdirAll(o.ReportDir, 0o755); err != nil {
		h.t.Fatal(err)
	}
	// A report left by an earlier run must not pass for this one's.
	for _, f := range []string{"junit.xml", "dry-run.xml", "e2e.log", "summary.txt", "summary.json"} {
		if err := os.Remove(filepath.Join(o.ReportDir, f)); err != nil && !os.IsNotExist(err) {
			h.t.Fatal(err)
		}
	}
	e2eTest := filepath.Join(s.bin, "e2e.test")
	suiteArgs := []string{
		"--kubeconfig=" + kubeconfig,
		"--kubectl-path=" + s.kubectl,
		"--provider=skeleton",
		// The hosts are containers of this machine; nothing is slow on purpose, but 2 cores are shared.
		"--system-pods-startup-timeout=5m",
	}
	if len(o.NonBlockingTaints) > 0 {
		suiteArgs = append(suiteArgs, "--non-blocking-taints="+strings.Join(append([]string{"node-role.kubernetes.io/control-plane"}, o.NonBlockingTaints...), ","))
	}

	// A dry run first: the focus must select exactly the subset, so that a renamed spec in a new
	// release is an error here rather than a test that silently stops running.
	if !o.Full {
		dry := filepath.Join(o.ReportDir, "dry-run.xml")
		cmd := exec.Command(e2eTest, append([]string{"--ginkgo.dry-run", "--ginkgo.focus=" + focus, "--ginkgo.junit-report=" + dry, "--ginkgo.no-color"}, suiteArgs...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			h.t.Fatalf("e2e.test --ginkgo.dry-run: %v\n%s", err, tailLines(string(out), 40))
		}
		r := readJUnit(h.t, dry)
		var selected []string
		for _, c := range r.cases() {
			if c.Skipped == nil {
				selected = append(selected, specText(c.Name))
			}
		}
		var missing []string
		for _, n := range subset {
			if !slices.ContainsFunc(selected, func(text string) bool { return isSpec("[It] "+text, n) }) {
				missing = append(missing, n)
			}
		}
		if len(missing) > 0 || len(selected) != len(subset) {
			h.t.Fatalf("the subset and the suite disagree: %d specs selected for %d names; not in the suite:\n%s\nselected:\n%s",
				len(selected), len(subset), strings.Join(missing, "\n"), strings.Join(selected, "\n"))
		}
	}

	h.waitSettled(kubeconfig, 10*time.Minute)
	ctx, cancel := context.WithTimeout(context.Background(), o.Timeout+5*time.Minute)
	defer cancel()
	args := []string{
		"--procs=" + fmt.Sprint(o.Procs), "--timeout=" + o.Timeout.String(), "--no-color", "--poll-progress-after=3m",
		"--focus=" + focus, "--junit-report=junit.xml", "--output-dir=" + o.ReportDir,
		e2eTest, "--",
	}
	cmd := exec.CommandContext(ctx, filepath.Join(s.bin, "ginkgo"), append(args, suiteArgs...)...)
	logFile, err := os.Create(filepath.Join(o.ReportDir, "e2e.log"))
	if err != nil {
		h.t.Fatal(err)
	}
	defer logFile.Close()
	cmd.Stdout, cmd.Stderr = logFile, logFile
	h.t.Logf("conformance: running %s with %d ginkgo processes; log in %s", label, o.Procs, logFile.Name())
	start := time.Now()
	runErr := cmd.Run()
	elapsed := time.Since(start)

	sum := conformanceSummary{Version: current, Focus: label, Procs: o.Procs, Duration: elapsed}
	junit := filepath.Join(o.ReportDir, "junit.xml")
	if _, err := os.Stat(junit); err != nil {
		log, _ := os.ReadFile(logFile.Name())
		h.t.Fatalf("ginkgo wrote no JUnit report (%v, exit: %v):\n%s", err, runErr, tailLines(string(log), 60))
	}
	for _, c := range readJUnit(h.t, junit).cases() {
		switch {
		case c.Skipped != nil && c.Skipped.Message == "skipped":
			// Outside the focus: ginkgo lists every spec of the suite, these as plainly "skipped".
		case c.Skipped != nil:
			// Inside the focus, skipped by the spec itself: "skipped - <why>".
			sum.Skipped++
			sum.SkipReasons = append(sum.SkipReasons, specText(c.Name)+": "+strings.TrimPrefix(c.Skipped.Message, "skipped - "))
		case c.Failure != nil || c.Error != nil:
			sum.Specs++
			sum.Failed = append(sum.Failed, specText(c.Name))
			msg := ""
			if c.Failure != nil {
				msg = c.Failure.Message
			} else {
				msg = c.Error.Message
			}
			sum.Messages = append(sum.Messages, headLines(msg, 8))
		default:
			sum.Specs++
			sum.Passed++
		}
	}
	// Every spec of the subset runs: one skipped is a failure too (under CI nothing may skip).
	if !o.Full && (sum.Specs != len(subset) || sum.Skipped > 0) {
		h.t.Errorf("the subset has %d specs; %d ran and %d were skipped:\n%s", len(subset), sum.Specs, sum.Skipped, strings.Join(sum.SkipReasons, "\n"))
	}
	writeSummary(h.t, o.ReportDir, sum)
	h.t.Logf("conformance summary (%s):\n%s", o.ReportDir, sum)
	if len(sum.Failed) > 0 || runErr != nil {
		// The log's end first, then why each spec failed and the state of the nodes and of
		// kube-system's pods (what the suite's set-up waits for), so that the last lines of the
		// test's output, which a CI digest shows, say what went wrong.
		log, _ := os.ReadFile(logFile.Name())
		var why strings.Builder
		for i, f := range sum.Failed {
			fmt.Fprintf(&why, "FAILED %s", f)
			if i < len(sum.Messages) && sum.Messages[i] != "" {
				fmt.Fprintf(&why, ": %s", strings.Join(strings.Fields(sum.Messages[i]), " "))
			}
			why.WriteString("\n")
		}
		state, _ := clusterState(kubeconfig)
		h.t.Errorf("conformance: %d of %d specs failed (ginkgo: %v); end of the log:\n%s\n%s%s", len(sum.Failed), sum.Specs, runErr,
			tailLines(string(log), 80), why.String(), state)
	}
	return sum
}

func writeSummary(t *testing.T, dir string, s conformanceSummary) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "summary.txt"), []byte(s.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if s.Failed == nil {
		s.Failed = []string{}
	}
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "summary.json"), append(data, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

// junitReport is the part of ginkgo's JUnit report the summary reads.
type junitReport struct {
	Suites []struct {
		Cases []junitCase `xml:"testcase"`
	} `xml:"testsuite"`
}

type junitCase struct {
	Name    string        `xml:"name,attr"`
	Time    float64       `xml:"time,attr"`
	Skipped *junitMessage `xml:"skipped"`
	Failure *junitMessage `xml:"failure"`
	Error   *junitMessage `xml:"error"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

func (r junitReport) cases() []junitCase {
	var out []junitCase
	for _, s := range r.Suites {
		for _, c := range s.Cases {
			// The suite's setup and teardown nodes are reported as cases of their own.
			if strings.HasPrefix(c.Name, "[It] ") {
				out = append(out, c)
			}
		}
	}
	return out
}

func readJUnit(t *testing.T, path string) junitReport {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r junitReport
	if err := xml.Unmarshal(data, &r); err != nil {
		t.Fatalf("reading %s: %v", path, err)
	}
	return r
}

// specText is a JUnit case's name without ginkgo's "[It] ": the spec's full text, and its labels
// in brackets when it has some.
func specText(caseName string) string {
	return strings.TrimPrefix(caseName, "[It] ")
}

// headLines is the first n lines of s.
func headLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}

// waitSettled waits until every node is Ready and every kube-system pod Ready or Succeeded,
// which the suite's set-up requires (it gives up after --system-pods-startup-timeout): the
// subtest before may just have replaced a node, whose pods are still starting. It fails the
// test with what is not yet so when timeout passes.
func (h *harness) waitSettled(kubeconfig string, timeout time.Duration) {
	h.t.Helper()
	start := time.Now()
	var state string
	err := wait.PollUntilContextTimeout(context.Background(), 2*time.Second, timeout, true, func(context.Context) (bool, error) {
		var settled bool
		state, settled = clusterState(kubeconfig)
		return settled, nil
	})
	if err != nil {
		h.t.Fatalf("the cluster did not settle in %s before the conformance suite:\n%s", timeout, state)
	}
	h.t.Logf("the cluster settled in %s: %s", time.Since(start).Round(time.Second), strings.ReplaceAll(strings.TrimSpace(state), "\n", "; "))
}

// clusterState is a line per node that is not Ready and per kube-system pod that is neither
// Ready nor Succeeded, with why, and a count of each; an error reading them is said too.
// settled is true when every node is Ready and every such pod is.
func clusterState(kubeconfig string) (state string, settled bool) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return "cluster state: " + err.Error() + "\n", false
	}
	cfg.Timeout = 20 * time.Second
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return "cluster state: " + err.Error() + "\n", false
	}
	ctx := context.Background()
	var b strings.Builder
	settled = true
	nodes, err := c.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		settled = false
		fmt.Fprintf(&b, "nodes: %v\n", err)
	} else {
		bad := 0
		for _, n := range nodes.Items {
			for _, cond := range n.Status.Conditions {
				if cond.Type == corev1.NodeReady && cond.Status != corev1.ConditionTrue {
					bad++
					fmt.Fprintf(&b, "node %s not Ready: %s %s\n", n.Name, cond.Reason, cond.Message)
				}
			}
			if n.Spec.Unschedulable {
				fmt.Fprintf(&b, "node %s is cordoned\n", n.Name)
			}
		}
		fmt.Fprintf(&b, "nodes: %d, %d not Ready\n", len(nodes.Items), bad)
		settled = settled && bad == 0 && len(nodes.Items) > 0
	}
	pods, err := c.CoreV1().Pods("kube-system").List(ctx, metav1.ListOptions{})
	if err != nil {
		fmt.Fprintf(&b, "kube-system pods: %v\n", err)
		return b.String(), false
	}
	bad := 0
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodSucceeded || podReady(&p) {
			continue
		}
		bad++
		why := []string{string(p.Status.Phase)}
		if p.Status.Reason != "" {
			why = append(why, p.Status.Reason)
		}
		if p.DeletionTimestamp != nil {
			why = append(why, "terminating since "+p.DeletionTimestamp.UTC().Format(time.TimeOnly))
		}
		for _, cs := range p.Status.ContainerStatuses {
			switch {
			case cs.State.Waiting != nil:
				why = append(why, fmt.Sprintf("%s waiting: %s %s", cs.Name, cs.State.Waiting.Reason, cs.State.Waiting.Message))
			case cs.State.Terminated != nil:
				why = append(why, fmt.Sprintf("%s terminated: %s (exit %d)", cs.Name, cs.State.Terminated.Reason, cs.State.Terminated.ExitCode))
			case !cs.Ready:
				why = append(why, fmt.Sprintf("%s running, not ready, %d restarts", cs.Name, cs.RestartCount))
			}
		}
		for _, cond := range p.Status.Conditions {
			if cond.Status != corev1.ConditionTrue && cond.Message != "" {
				why = append(why, fmt.Sprintf("%s: %s", cond.Type, cond.Message))
			}
		}
		fmt.Fprintf(&b, "pod kube-system/%s on %q: %s\n", p.Name, p.Spec.NodeName, strings.Join(why, "; "))
	}
	fmt.Fprintf(&b, "kube-system pods: %d, %d neither Ready nor Succeeded\n", len(pods.Items), bad)
	return b.String(), settled && bad == 0
}

func tailLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
