package scenarios

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/bootstrap"
	"github.com/slipway-dev/slipway/test/envtest"
)

// NodeCredentials gives the node settings a registry password and a proxy with a password, and
// the cluster the Secret of node credentials apply writes from them. The user-data the
// controller renders for a new Machine holds neither; its fetcher, run with the bootstrap token
// the controller made for the Machine against the real API server (the pin from cluster-info,
// the token's groups, the RBAC of manifests/machine-controller), writes exactly that Secret's
// files. Once the Node joined and the controller deleted the token, the same fetch is refused
// (within the API server's 10 s token cache) with a message that says so.
func NodeCredentials(t *testing.T, env *envtest.Env, newCloud NewCloud) {
	py, err := exec.LookPath("python3")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("python3 is missing: pool machines' credentials fetcher needs it")
		}
		t.Skip("no python3 to run the credentials fetcher with")
	}
	var hold atomic.Bool
	hold.Store(true)
	rc := &recordingCloud{userdata: map[string]string{}}
	f := setup(t, env, func(t *testing.T) Cloud { rc.Cloud = newCloud(t); return rc }, nil,
		envtest.NeverJoin(func(*v1alpha1.Machine) bool { return hold.Load() }))
	key := client.ObjectKey{Namespace: bootstrap.SettingsNamespace, Name: bootstrap.SettingsSecret}
	original := &corev1.Secret{}
	if err := env.Client.Get(f.ctx, key, original); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.restoreSettings(original) })

	s := envtest.NodeSettings()
	s.Cluster.Proxy = v1beta1.Proxy{HTTPS: "http://proxy-user:pr0xy-s3cret@proxy.envtest.example:3128"}
	s.Cluster.ContainerRuntime.Containerd.Registries = map[string]v1beta1.ContainerdRegistry{
		"registry.envtest.example": {Auth: &v1beta1.RegistryAuth{Username: "robot", Password: "registry-s3cret"}}}
	f.writeSettings(s)
	data, err := bootstrap.Credentials(s)
	if err != nil {
		t.Fatal(err)
	}
	creds := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: bootstrap.CredentialsNamespace, Name: bootstrap.CredentialsSecret}, Data: data}
	if err := env.Client.Create(f.ctx, creds); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), creds) })

	f.create(f.deployment("credentials", 1, intstr.FromInt32(1), intstr.FromInt32(0)))
	m := f.heldMachine()
	ud := rc.get(m.Name)
	for _, secret := range []string{"pr0xy-s3cret", "proxy-user", "registry-s3cret", "robot", "proxy.envtest.example"} {
		if strings.Contains(ud, secret) {
			t.Errorf("the user-data of %s holds %q", m.Name, secret)
		}
	}

	dir := filepath.Join(t.TempDir(), "credentials")
	out, err := fetchWith(t, py, ud, dir)
	t.Logf("the fetcher printed:\n%s", out)
	if err != nil {
		t.Fatalf("the fetcher of %s's user-data: %v\n%s", m.Name, err, out)
	}
	for name, want := range data {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || string(got) != string(want) {
			t.Errorf("fetched %s: %v, %q; want the Secret's %q", name, err, got, want)
		}
	}

	f.joinHeld(&m, &hold)
	// The API server keeps a token it accepted for 10 s (its token cache).
	envtest.Eventually(t, wait, "the fetch refused after the join", func() (bool, string) {
		out, err := fetchWith(t, py, ud, filepath.Join(t.TempDir(), "again"))
		return err != nil && strings.Contains(out, "refused the bootstrap token (401 Unauthorized)"), out
	})
}

// fetchWith runs the fetcher of user-data ud with its own configuration, but writing into dir.
func fetchWith(t *testing.T, py, ud, dir string) (string, error) {
	t.Helper()
	var cc struct {
		WriteFiles []struct{ Path, Content string } `json:"write_files"`
	}
	if err := yaml.Unmarshal([]byte(ud), &cc); err != nil {
		t.Fatalf("the user-data: %v", err)
	}
	files := map[string]string{}
	for _, f := range cc.WriteFiles {
		files[f.Path] = f.Content
	}
	var cfg map[string]any
	if err := json.Unmarshal([]byte(files["/run/slipway/fetch.json"]), &cfg); err != nil {
		t.Fatalf("the user-data's fetch configuration: %v", err)
	}
	cfg["dir"] = dir
	tmp := t.TempDir()
	raw, _ := json.Marshal(cfg)
	if err := os.WriteFile(filepath.Join(tmp, "fetch.json"), raw, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tmp, "fetch-credentials"), []byte(files["/etc/slipway/node/fetch-credentials"]), 0o700); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(py, filepath.Join(tmp, "fetch-credentials"), filepath.Join(tmp, "fetch.json")).CombinedOutput()
	return string(out), err
}

// restoreSettings puts the node settings back as the environment wrote them, for the next
// scenarios.
func (f *fixture) restoreSettings(original *corev1.Secret) {
	restored := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: original.Namespace, Name: original.Name}, Data: original.Data}
	_ = f.env.Client.Delete(context.Background(), restored)
	if err := f.env.Client.Create(context.Background(), restored); err != nil {
		f.t.Errorf("restoring the node settings: %v", err)
	}
}
