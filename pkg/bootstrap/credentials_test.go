package bootstrap_test

import (
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/bootstrap"
)

// python is the Python 3 that runs the fetcher, as cloud-init's on a machine would. Only
// outside CI may a machine without one skip the tests that need it.
func python(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("python3")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("python3 is missing: the credentials fetcher of pool machines needs it")
		}
		t.Skip("no python3 to run the credentials fetcher with")
	}
	return p
}

// secretSettings are the site's settings with every kind of credential the manifest can hold:
// a registry password and an identity token, and a proxy with a user and password.
func secretSettings(t *testing.T) bootstrap.Settings {
	s := settings(t, "site")
	s.Cluster.Proxy.HTTP = "http://proxy-user:pr0xy-s3cret@proxy.example.com:3128"
	s.Cluster.Proxy.HTTPS = "http://proxy-user:pr0xy-s3cret@proxy.example.com:3128"
	s.Cluster.ContainerRuntime.Containerd.Registries["quay.io"] = v1beta1.ContainerdRegistry{
		Auth: &v1beta1.RegistryAuth{IdentityToken: "quay-identity-t0ken"}}
	return s
}

var secretValues = []string{"p@ss", "robot", "pr0xy-s3cret", "proxy-user", "quay-identity-t0ken"}

// TestUserDataCarriesNoCredential: rendered for a manifest with registry credentials and a
// proxy with a password, the user-data holds none of them, in any file or anywhere else, and
// the bootstrap token only in the join configuration and the fetch's. It fetches them instead:
// the runner runs the fetcher before the setup scripts, for exactly the files the settings
// make, from the Secret only the controller's bootstrap tokens may read; a manifest without any
// fetches nothing.
func TestUserDataCarriesNoCredential(t *testing.T) {
	c := validConfig(t, "debian", "site")
	c.Settings = secretSettings(t)
	ud, err := bootstrap.Render(c)
	if err != nil {
		t.Fatal(err)
	}
	_, files := parse(t, ud)
	for _, s := range secretValues {
		if strings.Contains(ud, s) {
			t.Errorf("the user-data holds %q", s)
		}
		for path, content := range files {
			if strings.Contains(content, s) {
				t.Errorf("%s in the user-data holds %q", path, s)
			}
		}
	}
	for path, content := range files {
		if strings.Contains(content, c.Token) && path != "/run/slipway/join.yaml" && path != "/run/slipway/fetch.json" {
			t.Errorf("%s holds the bootstrap token", path)
		}
	}

	runner := files["/usr/local/sbin/slipway-join"]
	fetch := strings.Index(runner, "python3 /etc/slipway/node/fetch-credentials /run/slipway/fetch.json")
	if fetch < 0 || fetch > strings.Index(runner, "/etc/slipway/node/prerequisites.sh") {
		t.Errorf("the runner does not fetch the credentials before the setup scripts:\n%s", runner)
	}
	if !strings.Contains(runner, "trap 'rm -rf /run/slipway/credentials /run/slipway/fetch.json' EXIT") {
		t.Error("the runner does not remove the fetched credentials when it ends")
	}
	if !strings.HasPrefix(files["/etc/slipway/node/fetch-credentials"], "#!/usr/bin/env python3\n") {
		t.Error("the user-data lacks the fetcher")
	}
	var cfg struct {
		Server, CACertHash, Token, Namespace, Name, Group, Dir string
		Keys                                                   []string
	}
	if err := json.Unmarshal([]byte(files["/run/slipway/fetch.json"]), &cfg); err != nil {
		t.Fatalf("the fetch's configuration: %v", err)
	}
	creds, err := bootstrap.Credentials(c.Settings)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range creds {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if cfg.Server != c.APIServerEndpoint || cfg.CACertHash != c.CACertHash || cfg.Token != c.Token ||
		cfg.Namespace != "kube-system" || cfg.Name != bootstrap.CredentialsSecret || cfg.Group != bootstrap.CredentialsGroup ||
		cfg.Dir != "/run/slipway/credentials" || !slices.Equal(cfg.Keys, keys) || len(keys) != 3 {
		t.Errorf("the fetch's configuration is %+v; want keys %v", cfg, keys)
	}
	for _, s := range []string{"p@ss", "pr0xy-s3cret", "quay-identity-t0ken"} {
		found := false
		for _, v := range creds {
			found = found || strings.Contains(string(v), s)
		}
		if !found {
			t.Errorf("the credentials Secret lacks %q", s)
		}
	}

	plain, err := bootstrap.Render(validConfig(t, "debian", "minimal"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plain, "fetch-credentials") || strings.Contains(plain, "/run/slipway/credentials") {
		t.Error("the user-data of a manifest without credentials or proxy fetches them")
	}
}

// apiServer stands in for the API server as the fetcher meets it: kube-public/cluster-info
// readable by anyone, naming the CA of its TLS certificate, and the credentials Secret answered
// with secretStatus. It records the Authorization header of every request.
type apiServer struct {
	*httptest.Server
	secretStatus int
	secretData   map[string][]byte
	mu           sync.Mutex
	auth         []string
}

func newAPIServer(t *testing.T) *apiServer {
	a := &apiServer{secretStatus: http.StatusOK}
	a.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		a.auth = append(a.auth, r.URL.Path+" "+r.Header.Get("Authorization"))
		status, data := a.secretStatus, a.secretData
		a.mu.Unlock()
		switch r.URL.Path {
		case "/api/v1/namespaces/kube-public/configmaps/cluster-info":
			ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: a.Certificate().Raw})
			kc := fmt.Sprintf("apiVersion: v1\nkind: Config\nclusters:\n- cluster:\n    certificate-authority-data: %s\n    server: %s\n  name: \"\"\n",
				base64.StdEncoding.EncodeToString(ca), a.URL)
			_ = json.NewEncoder(w).Encode(map[string]any{"kind": "ConfigMap", "data": map[string]string{"kubeconfig": kc}})
		case "/api/v1/namespaces/kube-system/secrets/" + bootstrap.CredentialsSecret:
			w.WriteHeader(status)
			_ = json.NewEncoder(w).Encode(map[string]any{"kind": "Secret", "data": data})
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(a.Close)
	return a
}

func (a *apiServer) pin(t *testing.T) string {
	h, err := bootstrap.CACertHash(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: a.Certificate().Raw}))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// runFetch renders c's user-data and runs its fetcher, with its own configuration but for the
// directory it writes into (dir), and returns what it printed.
func runFetch(t *testing.T, c bootstrap.Config, dir string, edit func(map[string]any)) (string, error) {
	t.Helper()
	ud, err := bootstrap.Render(c)
	if err != nil {
		t.Fatal(err)
	}
	_, files := parse(t, ud)
	var cfg map[string]any
	if err := json.Unmarshal([]byte(files["/run/slipway/fetch.json"]), &cfg); err != nil {
		t.Fatal(err)
	}
	cfg["dir"] = dir
	if edit != nil {
		edit(cfg)
	}
	tmp := t.TempDir()
	script, config := filepath.Join(tmp, "fetch-credentials"), filepath.Join(tmp, "fetch.json")
	raw, _ := json.Marshal(cfg)
	if err := os.WriteFile(script, []byte(files["/etc/slipway/node/fetch-credentials"]), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(config, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(python(t), script, config)
	// The image's environment may name a proxy: the API server is reached directly anyway.
	cmd.Env = append(os.Environ(), "https_proxy=http://127.0.0.1:1", "HTTPS_PROXY=http://127.0.0.1:1")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestFetchCredentials runs the user-data's fetcher against a TLS server standing in for the
// API server: with the pinned CA it sends the bootstrap token, once, only for the Secret, and
// writes each file root-only; each failure is one clear line on the console naming the cause
// and what to do, with exit code 1 and no file written. A server whose CA does not match the
// pin never sees the token.
func TestFetchCredentials(t *testing.T) {
	s := secretSettings(t)
	creds, err := bootstrap.Credentials(s)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		status int
		data   map[string][]byte
		edit   func(cfg map[string]any)
		want   string
	}{
		{name: "fetched", status: 200, data: creds, want: "fetched containerd-auth-v2.toml, containerd-auth-v3.toml, proxy.env from Secret kube-system/slipway-node-credentials"},
		{name: "token refused", status: 401, want: "refused the bootstrap token (401 Unauthorized): it expired, or was deleted"},
		{name: "not allowed", status: 403, want: "may not read Secret kube-system/slipway-node-credentials (403 Forbidden): tokens of group system:bootstrappers:slipway:node-credentials may"},
		{name: "no secret", status: 404, want: "Secret kube-system/slipway-node-credentials is missing (404 Not Found): slipway apply writes it"},
		{name: "a file missing", status: 200, data: map[string][]byte{"proxy.env": creds["proxy.env"]},
			want: "Secret kube-system/slipway-node-credentials has no containerd-auth-v2.toml, which this machine's settings need"},
		{name: "another CA", status: 200, data: creds, edit: func(cfg map[string]any) { cfg["caCertHash"] = "sha256:" + strings.Repeat("ab", 32) },
			want: "matches the pinned hash sha256:abab"},
		{name: "unreachable", edit: func(cfg map[string]any) { cfg["server"], cfg["timeoutSeconds"] = closedPort(t), 1 },
			want: "cannot reach the API server"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api := newAPIServer(t)
			api.secretStatus, api.secretData = tt.status, tt.data
			c := validConfig(t, "ubuntu", "site")
			c.Settings, c.APIServerEndpoint, c.CACertHash = s, api.Listener.Addr().String(), api.pin(t)
			dir := filepath.Join(t.TempDir(), "credentials")
			out, err := runFetch(t, c, dir, tt.edit)
			t.Logf("the fetcher printed:\n%s", out)
			if !strings.Contains(out, tt.want) {
				t.Errorf("the fetcher printed\n%s\nwant %q", out, tt.want)
			}
			for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
				if !strings.HasPrefix(line, "slipway-join: ") {
					t.Errorf("the fetcher printed %q, not a line of the runner's", line)
				}
			}
			entries, _ := os.ReadDir(dir)
			if tt.name != "fetched" {
				if code := exitCode(err); code != 1 {
					t.Errorf("exit code %d, want 1", code)
				}
				if len(entries) != 0 {
					t.Errorf("%d files written after a failure", len(entries))
				}
				if tt.name == "another CA" {
					for _, a := range api.auth {
						if strings.Contains(a, "Bearer") {
							t.Errorf("the token went to a server whose CA does not match the pin: %s", a)
						}
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if info, err := os.Stat(dir); err != nil || info.Mode().Perm() != 0o700 {
				t.Errorf("the credentials directory: %v, mode %v; want 0700", err, info.Mode().Perm())
			}
			for k, v := range creds {
				got, err := os.ReadFile(filepath.Join(dir, k))
				info, _ := os.Stat(filepath.Join(dir, k))
				if err != nil || string(got) != string(v) || info.Mode().Perm() != 0o600 {
					t.Errorf("%s: %v, mode %v, %q; want the Secret's, mode 0600", k, err, info.Mode().Perm(), got)
				}
			}
			if len(entries) != len(creds) {
				t.Errorf("%d files written, want %d", len(entries), len(creds))
			}
			want := []string{"/api/v1/namespaces/kube-public/configmaps/cluster-info ",
				"/api/v1/namespaces/kube-system/secrets/slipway-node-credentials Bearer " + c.Token}
			if !slices.Equal(api.auth, want) {
				t.Errorf("requests %q, want %q", api.auth, want)
			}
		})
	}
}

func TestCredentials(t *testing.T) {
	creds, err := bootstrap.Credentials(secretSettings(t))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(creds["proxy.env"]), "HTTPS_PROXY=http://proxy-user:pr0xy-s3cret@proxy.example.com:3128\n") ||
		!strings.Contains(string(creds["containerd-auth-v3.toml"]), `identitytoken = "quay-identity-t0ken"`) {
		t.Errorf("Credentials() = %q", creds)
	}
	none, err := bootstrap.Credentials(settings(t, "minimal"))
	if err != nil || len(none) != 0 {
		t.Errorf("Credentials(minimal) = %v, %v; want none", none, err)
	}
}

// closedPort is an address where a server listened a moment ago.
func closedPort(t *testing.T) string {
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()
	return gone.Listener.Addr().String()
}

func exitCode(err error) int {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	}
	return -1
}
