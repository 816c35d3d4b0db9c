package scripts

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
)

// runSnippet runs a piece of a rendered script in bash, with fail as lib.sh has it and a
// put_file that writes into out and sets its flag, and returns what it printed.
func runSnippet(t *testing.T, out, snippet string) (string, error) {
	t.Helper()
	prelude := `set -euo pipefail
fail() { printf 'slipway: %s\n' "$*" >&2; exit 1; }
put_file() { cat >"$OUT/$(basename "$1")"; printf 'mode %s\n' "$2" >"$OUT/$(basename "$1").mode"; if [ -n "${3:-}" ]; then printf -v "$3" 1; fi; }
flag=0
`
	cmd := exec.Command("bash", "-c", prelude+snippet+"\nprintf 'flag=%s\\n' \"$flag\"\nenv | grep -i '_proxy=' | sort || true\n")
	cmd.Env = append(os.Environ(), "OUT="+out)
	b, err := cmd.CombinedOutput()
	return string(b), err
}

// TestCredentialsFilesOnTheHost: what a script rendered with a CredentialsDir writes on the host
// from the credentials files is exactly what the script rendered without one carries: the same
// config.toml for both containerd versions, the same proxy environment file, the same proxy
// variables exported. The change flag is set in the script's own shell. A missing file stops
// the script with its name before anything is written, and the proxy file's lines are values,
// never run.
func TestCredentialsFilesOnTheHost(t *testing.T) {
	c := testCluster()
	creds, err := NodeCredentials(c)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, content := range creds {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	regs := registries(c)
	proxy, err := proxyFor(c)
	if err != nil {
		t.Fatal(err)
	}
	full2, _, _ := containerdConfigTOML("registry.k8s.io/pause:3.10.1", regs)
	full3, _, _ := containerdConfigV3("registry.k8s.io/pause:3.10.1", regs)
	public2, _, _ := containerdConfigTOML("registry.k8s.io/pause:3.10.1", withoutAuth(regs))
	public3, _, _ := containerdConfigV3("registry.k8s.io/pause:3.10.1", withoutAuth(regs))
	for _, tc := range []struct {
		name, public, from, want string
	}{
		{"config.toml v2", public2, CredentialsContainerdV2, full2},
		{"config.toml v3", public3, CredentialsContainerdV3, full3},
		{"proxy environment", "", CredentialsProxy, proxy.environmentFile()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			snippet, err := heredocFileWith("/etc/x/file", "0600", tc.public, filepath.Join(dir, tc.from), "flag")
			if err != nil {
				t.Fatal(err)
			}
			printed, err := runSnippet(t, out, snippet)
			if err != nil {
				t.Fatalf("%v: %s", err, printed)
			}
			got, _ := os.ReadFile(filepath.Join(out, "file"))
			if string(got) != tc.want {
				t.Errorf("the host gets\n%s\nwant what the script without a credentials directory writes:\n%s", got, tc.want)
			}
			if !strings.Contains(printed, "flag=1") {
				t.Errorf("the change flag is not set in the script's shell: %s", printed)
			}

			missing, err := heredocFileWith("/etc/x/file", "0600", tc.public, filepath.Join(out, "absent"), "flag")
			if err != nil {
				t.Fatal(err)
			}
			empty := t.TempDir()
			printed, err = runSnippet(t, empty, missing)
			if err == nil || !strings.Contains(printed, filepath.Join(out, "absent")+" is missing") {
				t.Errorf("with the credentials file missing: %v, %s; want a failure naming it", err, printed)
			}
			if entries, _ := os.ReadDir(empty); len(entries) != 0 {
				t.Errorf("with the credentials file missing, %d files were written", len(entries))
			}
		})
	}

	t.Run("proxy variables", func(t *testing.T) {
		var inline, fromFile strings.Builder
		if err := templates.ExecuteTemplate(&inline, "proxy", proxy); err != nil {
			t.Fatal(err)
		}
		if err := templates.ExecuteTemplate(&fromFile, "proxy", proxyEnv{From: filepath.Join(dir, CredentialsProxy)}); err != nil {
			t.Fatal(err)
		}
		want, err := runSnippet(t, t.TempDir(), inline.String())
		if err != nil {
			t.Fatal(err, want)
		}
		got, err := runSnippet(t, t.TempDir(), fromFile.String())
		if err != nil {
			t.Fatal(err, got)
		}
		if got != want || !strings.Contains(got, "https_proxy=http://proxy-user:pr0xy-s3cret@proxy.example.com:3128") {
			t.Errorf("exported from the file:\n%s\nwant as the script carrying them exports:\n%s", got, want)
		}

		hostile := filepath.Join(t.TempDir(), "proxy.env")
		marker := filepath.Join(t.TempDir(), "ran")
		if err := os.WriteFile(hostile, []byte("HTTP_PROXY=$(touch "+marker+")`touch "+marker+"`\nPATH=/nowhere\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		if err := templates.ExecuteTemplate(&b, "proxy", proxyEnv{From: hostile}); err != nil {
			t.Fatal(err)
		}
		got, err = runSnippet(t, t.TempDir(), b.String())
		if err != nil {
			t.Fatal(err, got)
		}
		if _, err := os.Stat(marker); err == nil {
			t.Error("a line of the proxy file ran as a command")
		}
		if !strings.Contains(got, "HTTP_PROXY=$(touch") || strings.Contains(got, "PATH=/nowhere") {
			t.Errorf("the proxy file's lines are not taken as values of the three proxy variables only:\n%s", got)
		}
	})
}

// testCluster is a loaded-looking manifest with registry credentials and a proxy that carries
// a user and password.
func testCluster() *v1beta1.Cluster {
	return &v1beta1.Cluster{
		APIEndpoint:    v1beta1.APIEndpoint{Host: "api.example.com", Port: 6443},
		ClusterNetwork: v1beta1.ClusterNetwork{PodSubnet: "10.244.0.0/16", ServiceSubnet: "10.96.0.0/12", ServiceDomainName: "cluster.local"},
		ContainerRuntime: v1beta1.ContainerRuntime{Containerd: v1beta1.Containerd{Registries: map[string]v1beta1.ContainerdRegistry{
			"docker.io":            {Mirrors: []string{"https://hub-cache.example.com"}, Auth: &v1beta1.RegistryAuth{Username: "robot", Password: `p@ss"word'`}},
			"registry.example.com": {Auth: &v1beta1.RegistryAuth{Auth: "cm9ib3Q6c2VjcmV0"}},
			"quay.io":              {Mirrors: []string{"https://quay-cache.example.com"}},
		}}},
		Proxy: v1beta1.Proxy{HTTP: "http://proxy-user:pr0xy-s3cret@proxy.example.com:3128",
			HTTPS: "http://proxy-user:pr0xy-s3cret@proxy.example.com:3128", NoProxy: ".example.com"},
	}
}
