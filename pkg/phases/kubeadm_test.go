package phases

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/inventory"
	"github.com/slipway-dev/slipway/pkg/kube"
	"github.com/slipway-dev/slipway/pkg/scripts"
	"github.com/slipway-dev/slipway/pkg/ssh"
	"github.com/slipway-dev/slipway/pkg/ssh/sshtest"
)

// noAPI is a run without a cluster API: the kubeadm steps are what these tests look at.
type noAPI struct{ *Run }

var errNoAPI = errors.New("no API in this test")

func (noAPI) WaitAPI(context.Context, time.Duration) (*kube.Client, error) { return nil, nil }
func (noAPI) Kube(context.Context) (*kube.Client, error)                   { return nil, errNoAPI }
func (noAPI) Reconnect()                                                   {}

// kubeadmRun is a run on one control plane "cp" (a fake host) with secrets to hide.
func kubeadmRun(t *testing.T) (*Run, *sshtest.Host, *ssh.Secrets) {
	t.Helper()
	c := &v1beta1.Cluster{APIVersion: v1beta1.APIVersion, Kind: v1beta1.Kind, Name: "unit", Versions: v1beta1.Versions{Kubernetes: "v1.36.3"},
		ControlPlane: v1beta1.ControlPlane{Hosts: []v1beta1.Host{{PublicAddress: "10.0.0.1", PrivateAddress: "10.0.0.1", Hostname: "cp", SSHPrivateKeyFile: "/k"}}}}
	v1beta1.SetDefaults(c, "test")
	if errs, _ := v1beta1.Validate(c); len(errs) > 0 {
		t.Fatal(errs.ToAggregate())
	}
	nodes := inventory.Nodes(c)
	fleet := &sshtest.Fleet{}
	secrets := &ssh.Secrets{}
	r := NewRun(Config{Manifest: c, Nodes: nodes, SSH: fleet, Secrets: secrets,
		Facts: map[string]scripts.Facts{"cp": {OS: scripts.OS{ID: "debian", VersionID: "12"}, Arch: "x86_64", CgroupVersion: 2}}})
	return r, fleet.Get(nodes[0].Target.String()), secrets
}

// checkKubeadmSecrets checks what a host received from a kubeadm phase: the configuration
// uploaded root-only with the secrets in it, kubeadm run with exactly the arguments in want
// (each with --config), no secret on any command line, the configuration removed last, and the
// secrets registered for hiding.
func checkKubeadmSecrets(t *testing.T, h *sshtest.Host, secrets *ssh.Secrets, config string, values []string, want ...string) {
	t.Helper()
	f, ok := h.File(config)
	if !ok || f.Mode != 0o600 || f.Owner != "root" {
		t.Fatalf("%s uploaded: %v, mode %o, owner %q", config, ok, f.Mode, f.Owner)
	}
	var kubeadm []string
	for _, c := range h.Calls() {
		for _, v := range values {
			if strings.Contains(c.Command, v) || strings.Contains(strings.Join(c.Env, " "), v) {
				t.Errorf("a secret is on the command line: %s", c.Command)
			}
		}
		if strings.HasPrefix(c.Command, "kubeadm ") {
			kubeadm = append(kubeadm, c.Command)
		}
	}
	for _, v := range values {
		if !strings.Contains(string(f.Data), v) {
			t.Errorf("%s lacks a secret kubeadm needs", config)
		}
		if secrets.Redact(v) != "[redacted]" {
			t.Errorf("a secret was not registered for hiding")
		}
	}
	if strings.Join(kubeadm, "\n") != strings.Join(want, "\n") {
		t.Errorf("kubeadm ran:\n%s\nwant:\n%s", strings.Join(kubeadm, "\n"), strings.Join(want, "\n"))
	}
	cmds := h.Commands()
	if last := cmds[len(cmds)-1]; last != "rm -f "+config {
		t.Errorf("the last command is %q, want the configuration removed", last)
	}
}

func TestInitKeepsSecretsOffCommandLines(t *testing.T) {
	r, h, secrets := kubeadmRun(t)
	if err := initCluster(context.Background(), noAPI{r}, "cp"); err != nil {
		t.Fatal(err)
	}
	token, key := r.join.token, r.join.key
	if token == "" || key == "" {
		t.Fatal("init did not record its token and key for the joins")
	}
	checkKubeadmSecrets(t, h, secrets, initConfig, []string{token, key},
		"kubeadm init --upload-certs --skip-token-print --skip-certificate-key-print --config "+initConfig)
}

func TestFinishInitRendersNewSecrets(t *testing.T) {
	r, h, secrets := kubeadmRun(t)
	// The node metadata step needs the API, which this test has not: it ends there.
	if err := finishInit(context.Background(), noAPI{r}, "cp"); !errors.Is(err, errNoAPI) {
		t.Fatalf("finishInit = %v, want it to reach the node metadata step", err)
	}
	var want []string
	for _, p := range []string{"upload-config all", "upload-certs --upload-certs --skip-certificate-key-print", "mark-control-plane",
		"bootstrap-token --skip-token-print", "kubelet-finalize all", "addon all"} {
		want = append(want, "kubeadm init phase "+p+" --config "+initConfig)
	}
	checkKubeadmSecrets(t, h, secrets, initConfig, []string{r.join.token, r.join.key}, want...)
}

func TestUploadCertsKeepsTheKeyOffCommandLines(t *testing.T) {
	r, h, secrets := kubeadmRun(t)
	r.initialised("abcdef.0123456789abcdef", "") // a token exists; the key is made on demand
	token, key, err := r.JoinCredentials(context.Background(), nil, true)
	if err != nil || token != "abcdef.0123456789abcdef" || len(key) != 64 {
		t.Fatalf("JoinCredentials = %q, %q, %v", token, key, err)
	}
	checkKubeadmSecrets(t, h, secrets, uploadConfig, []string{key},
		"kubeadm init phase upload-certs --upload-certs --skip-certificate-key-print --config "+uploadConfig)
}

func TestKubeadmConfigRemovedOnFailure(t *testing.T) {
	r, h, _ := kubeadmRun(t)
	h.On(`^kubeadm init`, sshtest.Response{ExitStatus: 1, Stderr: "[ERROR Port-6443]: Port 6443 is in use"})
	err := initCluster(context.Background(), noAPI{r}, "cp")
	if err == nil || !strings.Contains(err.Error(), "Port 6443 is in use") {
		t.Fatalf("initCluster = %v, want kubeadm's failure", err)
	}
	cmds := h.Commands()
	if cmds[len(cmds)-1] != "rm -f "+initConfig {
		t.Errorf("after a failed init the host received %q, want the configuration removed last", cmds)
	}
}
