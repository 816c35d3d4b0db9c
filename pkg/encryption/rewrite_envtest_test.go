package encryption_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	crenvtest "sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/slipway-dev/slipway/pkg/encryption"
	"github.com/slipway-dev/slipway/test/envtest"
)

// apiserver is a real kube-apiserver and etcd whose encryption configuration is one local file,
// read with automatic reload, as slipway configures a control plane.
type apiserver struct {
	t    *testing.T
	file string
	kc   kubernetes.Interface
	etcd *clientv3.Client
	// shown collects every line the code under test said, to check that no key is among them.
	shown []string
}

func startAPIServer(t *testing.T, initial encryption.Config) *apiserver {
	t.Helper()
	dir := t.TempDir()
	a := &apiserver{t: t, file: filepath.Join(dir, "config.yaml")}
	data, err := encryption.Render(initial)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Write(context.Background(), data); err != nil {
		t.Fatal(err)
	}
	cfg, env := envtest.StartOwn(t, func(env *crenvtest.Environment) {
		env.ControlPlane.GetAPIServer().Configure().
			Set("encryption-provider-config", a.file).
			Set("encryption-provider-config-automatic-reload", "true")
	})
	if a.kc, err = kubernetes.NewForConfig(cfg); err != nil {
		t.Fatal(err)
	}
	a.etcd, err = clientv3.New(clientv3.Config{Endpoints: []string{env.ControlPlane.Etcd.URL.String()}, DialTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.etcd.Close() })
	return a
}

// Write replaces the file atomically, as ssh.Host.Upload does on a control plane.
func (a *apiserver) Write(_ context.Context, data []byte) error {
	tmp := a.file + ".new"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	a.say("wrote " + encryption.Hash(data))
	return os.Rename(tmp, a.file)
}

// WaitLoaded polls the API server's /metrics, as apply does on each control plane.
func (a *apiserver) WaitLoaded(ctx context.Context, hash string) error {
	deadline := time.Now().Add(3 * time.Minute)
	for {
		raw, err := a.kc.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
		if err != nil {
			return err
		}
		if got, ok := encryption.LoadedHash(raw); ok && got == hash {
			a.say("loaded " + hash)
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the API server did not load %s in 3m", hash)
		}
		time.Sleep(2 * time.Second)
	}
}

// NewKey makes the key here: this process plays the leader.
func (a *apiserver) NewKey(_ context.Context, name string) (encryption.Key, error) {
	a.say("made " + name)
	return encryption.NewKey(name)
}

func (a *apiserver) say(line string) { a.shown = append(a.shown, line) }

// stored returns what etcd holds for the Secret ns/name.
func (a *apiserver) stored(ns, name string) []byte {
	a.t.Helper()
	resp, err := a.etcd.Get(context.Background(), "/registry/secrets/"+ns+"/"+name)
	if err != nil || len(resp.Kvs) != 1 {
		a.t.Fatalf("reading /registry/secrets/%s/%s from etcd: %v (%d keys)", ns, name, err, len(resp.Kvs))
	}
	return resp.Kvs[0].Value
}

// checkStored checks that every Secret of want reads back through the API with its value, and
// that etcd holds it encrypted under key (prefix), or in plain text when key is "".
func (a *apiserver) checkStored(want map[[2]string]string, key string) {
	a.t.Helper()
	ctx := context.Background()
	for id, value := range want {
		s, err := a.kc.CoreV1().Secrets(id[0]).Get(ctx, id[1], metav1.GetOptions{})
		if err != nil {
			a.t.Fatalf("reading Secret %s/%s: %v", id[0], id[1], err)
		}
		if string(s.Data["value"]) != value {
			a.t.Errorf("Secret %s/%s reads %q, want %q", id[0], id[1], s.Data["value"], value)
		}
		raw := a.stored(id[0], id[1])
		switch {
		case key == "" && !bytes.HasPrefix(raw, []byte("k8s\x00")):
			a.t.Errorf("Secret %s/%s is stored as %q…, want plain protobuf", id[0], id[1], raw[:min(len(raw), 24)])
		case key != "" && !bytes.HasPrefix(raw, []byte(encryption.StoredPrefix(key))):
			a.t.Errorf("Secret %s/%s is stored as %q…, want %q…", id[0], id[1], raw[:min(len(raw), 24)], encryption.StoredPrefix(key))
		case key != "" && bytes.Contains(raw, []byte(value)):
			a.t.Errorf("Secret %s/%s: etcd holds its value in plain text", id[0], id[1])
		}
	}
}

// The API server polls its encryption configuration once a minute, so each step below waits up
// to a minute for it. The three tests run side by side, each on an API server of its own that
// starts from the state the previous one would leave: a cluster enabling encryption, one
// rotating its key, and one whose rotation was killed midway. Together they are what apply does.

// TestEncryptionEnabled enables encryption on a running API server, as apply does: key-1 read
// first, then encrypting, then every Secret rewritten under it.
func TestEncryptionEnabled(t *testing.T) {
	t.Parallel()
	k1 := mustKey(t, encryption.FirstKey)
	staged := encryption.Staged(k1)
	a := startAPIServer(t, staged)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	data, _ := encryption.Render(staged)
	if err := a.WaitLoaded(ctx, encryption.Hash(data)); err != nil {
		t.Fatalf("the metric does not name the configuration the API server started with: %v", err)
	}
	want := a.seed(ctx)
	a.checkStored(want, "") // identity writes while key-1 is only read

	done, n, err := encryption.Converge(ctx, a, a.kc, staged, a.say)
	if err != nil {
		t.Fatal(err)
	}
	if n < len(want) || done.Rewritten != "key-1" || len(done.Keys) != 1 {
		t.Errorf("enabling rewrote %d Secrets and left %s", n, done.Describe())
	}
	a.checkStored(want, "key-1")
	a.checkNothingShown(staged, done)
}

// TestEncryptionRotated rotates the key of a cluster whose Secrets are under key-1: key-2 read
// first, then encrypting, every Secret rewritten, key-1 gone.
func TestEncryptionRotated(t *testing.T) {
	t.Parallel()
	k1 := mustKey(t, encryption.FirstKey)
	fresh := encryption.Fresh(k1)
	a := startAPIServer(t, fresh)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	want := a.seed(ctx)
	a.checkStored(want, "key-1")

	rotated, n, err := encryption.Rotate(ctx, a, a.kc, fresh, a.say)
	if err != nil {
		t.Fatal(err)
	}
	if n < len(want) || rotated.Rewritten != "key-2" || len(rotated.Keys) != 1 || rotated.Keys[0].Name != "key-2" {
		t.Errorf("the rotation rewrote %d Secrets and left %s", n, rotated.Describe())
	}
	a.checkStored(want, "key-2")
	a.checkNothingShown(fresh, rotated)
}

// TestEncryptionRotationResumed kills a rotation once key-3 encrypts, before the rewrite, so
// that Secrets are under key-2 and key-3; the next run reads the file back and finishes that
// rotation rather than starting one.
func TestEncryptionRotationResumed(t *testing.T) {
	t.Parallel()
	k2 := mustKey(t, "key-2")
	rotated := encryption.Fresh(k2) // what TestEncryptionRotated leaves
	a := startAPIServer(t, rotated)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	want := a.seed(ctx)
	a.checkStored(want, "key-2")

	k3, err := a.NewKey(ctx, rotated.NextKeyName())
	if err != nil {
		t.Fatal(err)
	}
	started, err := encryption.StartRotation(rotated, k3)
	if err != nil {
		t.Fatal(err)
	}
	promoted := encryption.Config{Keys: []encryption.Key{started.Keys[1], started.Keys[0]}, Rewritten: "key-2"}
	if err := encryption.Apply(ctx, a, promoted); err != nil {
		t.Fatal(err)
	}
	if _, err := a.kc.CoreV1().Secrets("default").Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "during"},
		Data: map[string][]byte{"value": []byte("written-under-key-3")}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	a.checkStored(map[[2]string]string{{"default", "during"}: "written-under-key-3"}, "key-3")
	a.checkStored(want, "key-2")
	want[[2]string{"default", "during"}] = "written-under-key-3"

	onHost, err := os.ReadFile(a.file)
	if err != nil {
		t.Fatal(err)
	}
	resumed, err := encryption.Parse(onHost)
	if err != nil {
		t.Fatal(err)
	}
	final, _, err := encryption.Rotate(ctx, a, a.kc, resumed, a.say)
	if err != nil {
		t.Fatal(err)
	}
	if final.Rewritten != "key-3" || len(final.Keys) != 1 || final.Keys[0].Name != "key-3" {
		t.Errorf("the resumed rotation left %s, want key-3 alone", final.Describe())
	}
	a.checkStored(want, "key-3")
	a.checkNothingShown(rotated, started, final)
}

// mustKey makes a key named name or fails the test.
func mustKey(t *testing.T, name string) encryption.Key {
	t.Helper()
	k, err := encryption.NewKey(name)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// seed creates three Secrets in each of two namespaces and returns their values by namespace
// and name.
func (a *apiserver) seed(ctx context.Context) map[[2]string]string {
	a.t.Helper()
	want := map[[2]string]string{}
	for _, ns := range []string{"default", "team-a"} {
		if ns != "default" {
			if _, err := a.kc.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
				a.t.Fatal(err)
			}
		}
		for i := range 3 {
			name, value := fmt.Sprintf("s%d", i), fmt.Sprintf("plain-value-%s-%d", ns, i)
			if _, err := a.kc.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name},
				Data: map[string][]byte{"value": []byte(value)}}, metav1.CreateOptions{}); err != nil {
				a.t.Fatal(err)
			}
			want[[2]string{ns, name}] = value
		}
	}
	return want
}

// checkNothingShown fails the test if any line the code under test said holds a key of cs, and
// logs the lines.
func (a *apiserver) checkNothingShown(cs ...encryption.Config) {
	a.t.Helper()
	for _, c := range cs {
		for _, k := range c.Keys {
			for _, line := range a.shown {
				if strings.Contains(line, base64.StdEncoding.EncodeToString(k.Secret)) || strings.Contains(line, string(k.Secret)) {
					a.t.Errorf("a line shows %s: %q", k.Name, line)
				}
			}
		}
	}
	a.t.Logf("progress:\n  %s", strings.Join(a.shown, "\n  "))
}
