package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
)

// kubeoneFile writes a testdata KubeOneCluster with a Kubernetes version inside slipway's window.
func kubeoneFile(t *testing.T, write func(string, string) string, testdata string) string {
	t.Helper()
	b, err := os.ReadFile(testdata)
	if err != nil {
		t.Fatal(err)
	}
	return write("kubeone.yaml", strings.ReplaceAll(string(b), "VERSION", fmt.Sprintf("v1.%d.1", v1beta1.MaxKubernetesMinor)))
}

func TestConfigMigrate(t *testing.T) {
	t.Setenv("SSH_AUTH_SOCK", "/nonexistent/agent.sock") // the hosts authenticate with the agent, as under KubeOne
	write := tempWriter(t)
	in := kubeoneFile(t, write, "../kubeone/testdata/v1beta2-openstack.yaml")
	out, stderr, code := run(t, "", "config", "migrate", "--from-kubeone", in)
	if code != ExitOK {
		t.Fatalf("code %d: %s", code, stderr)
	}
	for _, want := range []string{"Warning: cloudProvider.cloudConfig: not carried over", "Warning: helmReleases[0]: not supported", "Warning: features.metricsServer"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if strings.Contains(out+stderr, "password=secret") {
		t.Errorf("the cloud config's password was printed")
	}
	if strings.Contains(stderr, "(result)") {
		t.Errorf("the migrated manifest does not load:\n%s", stderr)
	}
	dump, stderr, code := run(t, "", "config", "dump", "-m", write("cluster.yaml", out))
	if code != ExitOK || !strings.Contains(dump, "canal:") || !strings.Contains(dump, "name: prod-pool1") {
		t.Fatalf("config dump of the migrated manifest: code %d\n%s\n%s", code, stderr, dump)
	}

	js, stderr, code := run(t, "", "config", "migrate", "--from-kubeone", in, "-o", "json")
	var res struct {
		Cluster  v1beta1.Cluster
		Warnings []struct{ Path, Message string }
	}
	if code != ExitOK || stderr != "" || json.Unmarshal([]byte(js), &res) != nil || res.Cluster.Name != "prod" || len(res.Warnings) == 0 || res.Warnings[0].Path == "" {
		t.Fatalf("-o json: code %d, stderr %q, %s", code, stderr, js)
	}
}

// A KubeOne manifest whose hosts are in KubeOne's Terraform output converts and loads with that
// output as it is.
func TestConfigMigrateWithKubeOneTerraform(t *testing.T) {
	t.Setenv("SSH_AUTH_SOCK", "/nonexistent/agent.sock")
	write := tempWriter(t)
	in := kubeoneFile(t, write, "testdata/kubeone-openstack-tf.yaml")
	tf := "../terraform/testdata/kubeone-openstack.json"
	out, stderr, code := run(t, "", "config", "migrate", "--from-kubeone", in, "-t", tf)
	if code != ExitOK || strings.Contains(stderr, "(result)") {
		t.Fatalf("code %d: %s", code, stderr)
	}
	dump, stderr, code := run(t, "", "config", "dump", "-m", write("cluster.yaml", out), "-t", tf)
	if code != ExitOK {
		t.Fatalf("config dump: code %d: %s", code, stderr)
	}
	for _, want := range []string{"name: demo", "publicAddress: 192.168.1.12", "address: 198.51.100.7", "replicas: 3", "flavor: m1.large", "image: Ubuntu Noble 24.04"} {
		if !strings.Contains(dump, want) {
			t.Errorf("dump lacks %q:\n%s", want, dump)
		}
	}
	// The Terraform output on stdin is read once, for the conversion and for the check.
	tfData, err := os.ReadFile(tf)
	if err != nil {
		t.Fatal(err)
	}
	if out2, stderr, code := run(t, string(tfData), "config", "migrate", "--from-kubeone", in, "-t", "-"); code != ExitOK || out2 != out {
		t.Errorf("-t -: code %d, a manifest other than -t FILE's:\n%s\n%s", code, out2, stderr)
	}
	// A result that does not load with the output on stdin is exit code 3 too, not 0.
	broken := write("broken.yaml", strings.Replace(mustReadFile(t, in), "openstack: {}", "none: {}", 1))
	if _, stderr, code := run(t, string(tfData), "config", "migrate", "--from-kubeone", broken, "-t", "-"); code != ExitConfig ||
		!strings.Contains(stderr, "the migrated manifest is invalid") {
		t.Errorf("an invalid result with -t -: code %d, stderr:\n%s", code, stderr)
	}
	if _, stderr, code := run(t, "", "config", "migrate", "--from-kubeone", "-", "-t", "-"); code != ExitUsage ||
		!strings.Contains(stderr, "the KubeOne manifest and the Terraform output cannot both be read from stdin") {
		t.Errorf("both on stdin: code %d, stderr:\n%s", code, stderr)
	}
	// Without -t the hosts are missing: the manifest is still printed, for the user to finish,
	// and migrate exits 3 saying what stops it, in text and in JSON.
	out, stderr, code = run(t, "", "config", "migrate", "--from-kubeone", in)
	if code != ExitConfig || !strings.Contains(stderr, "Error: the migrated manifest (pass -t with the Terraform output if the hosts come from there) is invalid") ||
		!strings.Contains(stderr, "controlPlane.hosts: Required value") || !strings.Contains(out, "kind: Cluster") {
		t.Errorf("without -t: code %d, stdout %d bytes, stderr:\n%s", code, len(out), stderr)
	}
	js, stderr, code := run(t, "", "config", "migrate", "--from-kubeone", in, "-o", "json")
	var res struct {
		Warnings []struct{ Path, Message string }
	}
	if code != ExitConfig || json.Unmarshal([]byte(js), &res) != nil || res.Warnings[len(res.Warnings)-1].Path != "(result)" || !strings.Contains(stderr, "controlPlane.hosts") {
		t.Errorf("without -t, -o json: code %d, stderr %q, %s", code, stderr, js)
	}
}

// TestConfigMigrateEscapesValues: names and values of a KubeOne manifest that reach a warning
// cannot steer the terminal or forge a line: their control characters are escaped.
func TestConfigMigrateEscapesValues(t *testing.T) {
	t.Setenv("SSH_AUTH_SOCK", "/nonexistent/agent.sock")
	write := tempWriter(t)
	b, err := os.ReadFile("../kubeone/testdata/v1beta2-openstack.yaml")
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.ReplaceAll(string(b), "VERSION", fmt.Sprintf("v1.%d.1", v1beta1.MaxKubernetesMinor))
	doc = strings.Replace(doc, "releaseName: ksm", `releaseName: "ksm\e[2J\e]0;owned\a\nWarning: forged"`, 1)
	_, stderr, _ := run(t, "", "config", "migrate", "--from-kubeone", write("kubeone.yaml", doc))
	if strings.ContainsAny(stderr, "\x1b\a") || strings.Contains(stderr, "\nWarning: forged") {
		t.Errorf("a control character of the manifest reached stderr: %q", stderr)
	}
	if want := `release ksm\x1b[2J\x1b]0;owned\a\nWarning: forged (chart kube-state-metrics, namespace kube-state-metrics) keeps running`; !strings.Contains(stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr)
	}
}

func TestConfigMigrateErrors(t *testing.T) {
	write := tempWriter(t)
	head := fmt.Sprintf("apiVersion: kubeone.k8c.io/v1beta2\nkind: KubeOneCluster\nversions: {kubernetes: v1.%d.0}\n", v1beta1.MaxKubernetesMinor)
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no file", []string{"config", "migrate"}, ExitUsage, "--from-kubeone is required"},
		{"bad output", []string{"config", "migrate", "--from-kubeone", "x", "-o", "xml"}, ExitUsage, `--output "xml" is not supported`},
		{"missing file", []string{"config", "migrate", "--from-kubeone", "/nonexistent/kubeone.yaml"}, ExitConfig, "/nonexistent/kubeone.yaml is invalid: reading the KubeOne manifest"},
		{"malformed", []string{"config", "migrate", "--from-kubeone", write("a.yaml", "apiVersion: [")}, ExitConfig, "parsing YAML"},
		{"a slipway manifest", []string{"config", "migrate", "--from-kubeone", write("b.yaml", "apiVersion: slipway.dev/v1beta1\nkind: Cluster\n")}, ExitConfig, `kind: Unsupported value: "Cluster"`},
		{"unknown field", []string{"config", "migrate", "--from-kubeone", write("c.yaml", head+"clusterNetwork: {cni: {flannel: {}}}\n")}, ExitConfig, "clusterNetwork.cni.flannel"},
		{"old version", []string{"config", "migrate", "--from-kubeone", write("d.yaml", strings.Replace(head, fmt.Sprintf("v1.%d.0", v1beta1.MaxKubernetesMinor), "v1.20.0", 1))}, ExitConfig,
			"versions.kubernetes: Invalid value: \"v1.20.0\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code := run(t, "", tt.args...)
			if code != tt.code || !strings.Contains(stderr, tt.want) {
				t.Errorf("code %d (want %d), stderr:\n%s\nwant %q", code, tt.code, stderr, tt.want)
			}
		})
	}
	help, _, _ := run(t, "", "config", "migrate", "--help")
	if !strings.Contains(help, "Examples:") || !strings.Contains(help, "--from-kubeone kubeone.yaml") {
		t.Errorf("help has no examples:\n%s", help)
	}
}

func mustReadFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
