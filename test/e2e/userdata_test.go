package e2e

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"path"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/slipway-dev/slipway/manifests"
	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/bootstrap"
	"github.com/slipway-dev/slipway/pkg/config"
	"github.com/slipway-dev/slipway/pkg/controller/machine"
	"github.com/slipway-dev/slipway/pkg/kube"
)

// joinWithUserData boots the user-data the machine-controller renders for a pool Machine on a
// fresh sandbox host, through the host's real cloud-init, and expects the host to join the
// cluster as a Node at version, Ready on containerd 2, tainted not-ready as every new pool
// Machine's Node is. Only the cloud server is missing: the host is seeded with a config drive
// as Nova lays it out (the OpenStack simulator's servers boot the same image that way), and the
// node settings come from the manifest as apply writes them, through their Secret encoding.
//
// With credentials, the settings also hold a registry password (for a registry the host never
// pulls from), which the user-data must not carry: the cluster gets the node credentials
// Secret and its Role and RoleBinding as the machine-controller step writes them, the token
// the controller's groups, and the host fetches the password with that token before its setup
// (bootstrap's fetch-credentials, run by cloud-init's Python). After the join containerd's
// config.toml holds it, root-only, the fetched files and the fetch's configuration are gone, and
// neither the user-data cloud-init kept nor its output log holds it.
func (h *harness) joinWithUserData(t *testing.T, c kubernetes.Interface, manifest, host, version string, credentials bool) {
	ctx := context.Background()
	loaded, err := config.Load(ctx, config.Options{ManifestPath: manifest})
	if err != nil {
		t.Fatal(err)
	}
	data, err := bootstrap.SettingsFor(loaded.Cluster, nil).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	settings, err := bootstrap.ParseSettings(data)
	if err != nil {
		t.Fatal(err)
	}
	groups := "system:bootstrappers:kubeadm:default-node-token"
	const password = "e2e-registry-passw0rd"
	if credentials {
		groups = machine.TokenGroups
		if settings.Cluster.ContainerRuntime.Containerd.Registries == nil {
			settings.Cluster.ContainerRuntime.Containerd.Registries = map[string]v1beta1.ContainerdRegistry{}
		}
		settings.Cluster.ContainerRuntime.Containerd.Registries["credentials-only.e2e.example"] = v1beta1.ContainerdRegistry{
			Auth: &v1beta1.RegistryAuth{Username: "e2e", Password: password}}
		h.publishNodeCredentials(t, c, settings)
	}
	cm, err := c.CoreV1().ConfigMaps(metav1.NamespacePublic).Get(ctx, "cluster-info", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	info, err := bootstrap.ParseClusterInfo(cm.Data["kubeconfig"])
	if err != nil {
		t.Fatal(err)
	}
	// A bootstrap token as kubeadm makes them; the controller makes one per Machine the same way,
	// in the same groups.
	out, err := h.onHost("cp-1", "kubeadm token create --ttl 15m --groups "+groups)
	if err != nil {
		t.Fatal(err)
	}
	token := strings.TrimSpace(out)
	ud, err := bootstrap.Render(bootstrap.Config{
		OperatingSystem:   "debian",
		KubeletVersion:    version,
		APIServerEndpoint: info.Endpoint,
		CACertHash:        info.CACertHash,
		Token:             token,
		Taints:            []bootstrap.Taint{{Key: v1alpha1.NotReadyTaintKey, Effect: string(corev1.TaintEffectNoSchedule)}},
		Settings:          settings,
	})
	if err != nil {
		t.Fatal(err)
	}
	meta, _ := json.Marshal(map[string]any{"uuid": "e2e-" + host, "name": host, "hostname": host, "launch_index": 0,
		"availability_zone": "nova", "meta": map[string]string{}, "devices": []any{}, "files": []any{}})
	seed := "/var/lib/cloud/seed/config_drive/openstack/"
	var b strings.Builder
	b.WriteString("set -euo pipefail\nrm -rf /var/lib/cloud/instance /var/lib/cloud/instances /var/lib/cloud/seed\n")
	for _, v := range []string{"2012-08-10", "latest"} {
		dir := path.Join(seed, v)
		fmt.Fprintf(&b, "mkdir -p %s\nbase64 -d >%s/meta_data.json <<'EOF'\n%s\nEOF\nbase64 -d >%s/user_data <<'EOF'\n%s\nEOF\necho '{}' >%s/vendor_data.json\n",
			dir, dir, b64(meta), dir, b64([]byte(ud)), dir)
	}
	// The harness knows this host by its SSH host keys: cloud-init keeps them, as a cloud image
	// would keep keys it was given.
	b.WriteString("printf 'ssh_deletekeys: false\\nssh_genkeytypes: []\\n' >/etc/cloud/cloud.cfg.d/90-e2e-keep-host-keys.cfg\n")
	b.WriteString("rm -f /etc/cloud/cloud-init.disabled\n")
	if out, err := h.onHost(host, b.String()); err != nil {
		t.Fatal(err, out)
	}
	start := time.Now()
	// cloud-init's boot stages, in their order; the last one runs the user-data's runcmd.
	out, err = h.onHost(host, "cloud-init init --local && cloud-init init && cloud-init modules --mode config && cloud-init modules --mode final")
	log, _ := h.onHost(host, "tail -n 40 /var/log/cloud-init-output.log")
	if err != nil || !strings.Contains(log, "slipway-join: joined") {
		t.Fatalf("cloud-init did not join %s (%v):\n%s\ncloud-init-output.log:\n%s", host, err, tail(out, 20), log)
	}
	t.Logf("cloud-init ran the user-data on %s in %s", host, time.Since(start).Round(time.Second))

	err = kube.Wait(ctx, "node "+host+" Ready", 4*time.Minute, func(ctx context.Context) (bool, string, error) {
		n, err := c.CoreV1().Nodes().Get(ctx, host, metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		return nodeReady(n), fmt.Sprintf("ready %t", nodeReady(n)), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("node %s Ready %s after cloud-init started", host, time.Since(start).Round(time.Second))
	n, err := c.CoreV1().Nodes().Get(ctx, host, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n.Status.NodeInfo.KubeletVersion != version {
		t.Errorf("node %s runs kubelet %s, want %s", host, n.Status.NodeInfo.KubeletVersion, version)
	}
	h.expectRuntimes(c, []string{host}, "containerd://2.2.9")
	tainted := false
	for _, tn := range n.Spec.Taints {
		tainted = tainted || (tn.Key == v1alpha1.NotReadyTaintKey && tn.Effect == corev1.TaintEffectNoSchedule)
	}
	if !tainted {
		t.Errorf("node %s registered without the %s taint: %v", host, v1alpha1.NotReadyTaintKey, n.Spec.Taints)
	}
	if out, err := h.onHost(host, `test ! -e /run/slipway/join.yaml || { echo "the join configuration with its token is left"; exit 1; }
[ "$(stat -c %a /etc/slipway/node/prerequisites.sh)" = 700 ] || { echo "the setup scripts are not root-only"; exit 1; }`); err != nil {
		t.Error(err, out)
	}
	if !credentials {
		return
	}
	if strings.Contains(ud, password) {
		t.Error("the user-data holds the registry password")
	}
	if out, err := h.onHost(host, `set -e
grep -q 'slipway-join: fetched containerd-auth-v2.toml, containerd-auth-v3.toml from Secret kube-system/`+bootstrap.CredentialsSecret+`' /var/log/cloud-init-output.log || { echo "cloud-init-output.log does not show the credentials fetched"; exit 1; }
test ! -e /run/slipway/credentials || { echo "the fetched credentials are left in /run/slipway/credentials"; exit 1; }
test ! -e /run/slipway/fetch.json || { echo "the fetch's configuration with its token is left"; exit 1; }
grep -q 'password = "`+password+`"' /etc/containerd/config.toml || { echo "containerd's config.toml lacks the fetched registry password"; exit 1; }
[ "$(stat -c %a /etc/containerd/config.toml)" = 600 ] || { echo "containerd's config.toml with the password is not root-only"; exit 1; }
! grep -rqs '`+password+`' /var/lib/cloud/instance/ /var/log/cloud-init-output.log /var/log/cloud-init.log || { echo "cloud-init kept the registry password"; exit 1; }`); err != nil {
		t.Error(err, out)
	}
}

// publishNodeCredentials writes the node credentials of settings into the cluster with their
// Role and RoleBinding, as the machine-controller step of apply does (the small cluster runs no
// machine-controller), and removes them when the test ends.
func (h *harness) publishNodeCredentials(t *testing.T, c kubernetes.Interface, settings bootstrap.Settings) {
	ctx := context.Background()
	data, err := bootstrap.Credentials(settings)
	if err != nil {
		t.Fatal(err)
	}
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: bootstrap.CredentialsNamespace, Name: bootstrap.CredentialsSecret}, Data: data}
	if _, err := c.CoreV1().Secrets(sec.Namespace).Create(ctx, sec, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rbac, err := manifests.FS.ReadFile("machine-controller/node-credentials.yaml")
	if err != nil {
		t.Fatal(err)
	}
	kubectl := "kubectl --kubeconfig /etc/kubernetes/admin.conf "
	if out, err := h.onHost("cp-1", kubectl+"apply -f - <<'EOF'\n"+string(rbac)+"EOF"); err != nil {
		t.Fatal(err, out)
	}
	t.Cleanup(func() {
		_ = c.CoreV1().Secrets(sec.Namespace).Delete(context.Background(), sec.Name, metav1.DeleteOptions{})
		_, _ = h.onHost("cp-1", kubectl+"delete --ignore-not-found -n kube-system role,rolebinding slipway:node-credentials")
	})
}

func b64(data []byte) string { return base64.StdEncoding.EncodeToString(data) }

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
