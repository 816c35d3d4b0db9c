package cli

import (
	"strings"
	"testing"
)

// TestKubeOneSpellings: the commands a KubeOne user types where slipway means the same run the
// same command, with the same output and the same refusals, and stay out of the command list.
func TestKubeOneSpellings(t *testing.T) {
	const m, tf = "../../examples/openstack.yaml", "../../examples/openstack-tf-output.json"
	for _, format := range []string{"text", "json"} {
		want, _, code := run(t, "", "config", "images", "-m", m, "-t", tf, "-o", format)
		got, stderr, code2 := run(t, "", "config", "images", "list", "-m", m, "-t", tf, "-o", format)
		if code != 0 || code2 != 0 || got != want {
			t.Errorf("config images list -o %s (code %d) differs from config images (code %d):\n%s\n%s", format, code2, code, got, stderr)
		}
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"kubeconfig generate refuses as kubeconfig does", []string{"kubeconfig", "generate", "--user", "jane", "-m", "x"}, "--user makes a private key"},
		{"KubeOne's --cn and --on are --user and --group", []string{"kubeconfig", "generate", "--cn", "jane", "--on", "system:masters", "--file", "j", "-m", "x"},
			"--group system:masters would make a cluster administrator"},
		{"--on without --cn", []string{"kubeconfig", "generate", "--on", "dev", "-m", "x"}, "--group, --ttl and --allow-system-identity need --user"},
		{"config images list takes no more", []string{"config", "images", "list", "all", "-m", "x"}, `slipway config images list takes no arguments, got ["all"]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, stderr, code := run(t, "", tt.args...)
			if code != ExitUsage || out != "" || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit code %d (want %d), stdout %q, stderr does not say %q:\n%s", code, ExitUsage, out, tt.want, stderr)
			}
		})
	}
	help, _, _ := run(t, "", "config", "images", "--help")
	if strings.Contains(help, "Available Commands") {
		t.Errorf("config images --help lists the KubeOne spelling as a command of its own:\n%s", help)
	}
}
