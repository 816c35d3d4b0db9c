package scripts_test

import (
	"strings"
	"testing"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/scripts"
)

const credentialsDir = "/run/slipway/credentials"

// withSecrets is the registries manifest with a proxy that carries a user and password, next to
// its registry credentials (a password and an auth string).
func withSecrets(t *testing.T) *v1beta1.Cluster {
	c := load(t, "registries")
	c.Proxy.HTTP = "http://proxy-user:pr0xy-s3cret@proxy.example.com:3128"
	c.Proxy.HTTPS = "http://proxy-user:pr0xy-s3cret@proxy.example.com:3128"
	return c
}

// secrets are the manifest's secret values as they appear in the scripts rendered without a
// CredentialsDir.
var secrets = []string{`p@ss\"word'`, "cm9ib3Q6c2VjcmV0", "pr0xy-s3cret", "proxy-user"}

// TestCredentialsDir renders the setup scripts as pool machines get them: none of the
// manifest's registry credentials or proxy values is in them, and each script reads them from
// the files of NodeCredentials instead; rendered without a CredentialsDir they carry them all.
func TestCredentialsDir(t *testing.T) {
	ubuntu := scripts.OS{ID: "ubuntu", VersionID: "24.04"}
	render := func(dir string) (prereq, install string) {
		c := withSecrets(t)
		prereq, err := scripts.Prerequisites(ubuntu, scripts.PrereqParams{Cluster: c, SandboxImage: "registry.k8s.io/pause:3.10.1", CredentialsDir: dir,
			RegistryCAs: map[string][]byte{"registry.example.com:5000": []byte("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n")}})
		if err != nil {
			t.Fatal(err)
		}
		install, err = scripts.InstallKubernetes(ubuntu, scripts.InstallParams{Cluster: c, Arch: "amd64", CredentialsDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		return prereq, install
	}
	prereq, install := render(credentialsDir)
	checkScript(t, "prerequisites-ubuntu-credentials-dir", prereq)
	checkScript(t, "install-ubuntu-credentials-dir", install)
	for _, s := range append(secrets, "proxy.example.com") {
		for name, script := range map[string]string{"prerequisites": prereq, "install-kubernetes": install} {
			if strings.Contains(script, s) {
				t.Errorf("%s rendered with a credentials directory carries %q", name, s)
			}
		}
	}
	for _, want := range []string{
		credentialsDir + "/" + scripts.CredentialsContainerdV2, credentialsDir + "/" + scripts.CredentialsContainerdV3,
		credentialsDir + "/" + scripts.CredentialsProxy,
	} {
		if !strings.Contains(prereq, want) {
			t.Errorf("prerequisites do not read %s", want)
		}
	}
	if !strings.Contains(install, credentialsDir+"/"+scripts.CredentialsProxy) {
		t.Errorf("install-kubernetes does not read the proxy from %s", credentialsDir)
	}

	prereq, install = render("")
	for _, s := range secrets {
		if !strings.Contains(prereq, s) {
			t.Errorf("prerequisites rendered for SSH lack %q", s)
		}
	}
	if !strings.Contains(install, "pr0xy-s3cret") {
		t.Error("install-kubernetes rendered for SSH lacks the proxy")
	}
}

func TestNodeCredentials(t *testing.T) {
	creds, err := scripts.NodeCredentials(withSecrets(t))
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string][]string{
		scripts.CredentialsContainerdV2: {`[plugins."io.containerd.grpc.v1.cri".registry.configs."registry-1.docker.io".auth]`, `password = "p@ss\"word'"`, `auth = "cm9ib3Q6c2VjcmV0"`},
		scripts.CredentialsContainerdV3: {`[plugins."io.containerd.cri.v1.images".registry.configs."hub-cache.example.com".auth]`, `password = "p@ss\"word'"`},
		scripts.CredentialsProxy:        {"HTTP_PROXY=http://proxy-user:pr0xy-s3cret@proxy.example.com:3128\n", "NO_PROXY=.example.com,10.0.0.0/8,localhost"},
	} {
		for _, w := range want {
			if !strings.Contains(creds[name], w) {
				t.Errorf("%s lacks %q:\n%s", name, w, creds[name])
			}
		}
	}
	if len(creds) != 3 {
		t.Errorf("%d files, want 3", len(creds))
	}
	none, err := scripts.NodeCredentials(load(t, "minimal"))
	if err != nil || len(none) != 0 {
		t.Errorf("NodeCredentials(minimal) = %v, %v: want nothing for a manifest without credentials or proxy", none, err)
	}
	debian := scripts.OS{ID: "debian", VersionID: "12"}
	params := scripts.PrereqParams{Cluster: load(t, "minimal"), SandboxImage: "registry.k8s.io/pause:3.10.1"}
	plain, err := scripts.Prerequisites(debian, params)
	if err != nil {
		t.Fatal(err)
	}
	params.CredentialsDir = credentialsDir
	bare, err := scripts.Prerequisites(debian, params)
	if err != nil {
		t.Fatal(err)
	}
	if bare != plain {
		t.Error("without credentials or proxy, a credentials directory changes the prerequisites")
	}
}
