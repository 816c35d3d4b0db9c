package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/random"

	"github.com/slipway-dev/slipway/pkg/config"
	"github.com/slipway-dev/slipway/pkg/mirror"
	"github.com/slipway-dev/slipway/pkg/mirror/mirrortest"
	"github.com/slipway-dev/slipway/pkg/version"
)

// mirrorSite writes a manifest whose containerd pulls through the mirror src, and stores in src
// a random image for each image its cluster runs. It returns the manifest and the images'
// digests by upstream reference.
func mirrorSite(t *testing.T, src *mirrortest.Registry) (string, map[string]v1.Hash) {
	t.Helper()
	t.Setenv("DOCKER_CONFIG", t.TempDir()) // no credentials of this machine's
	m := tempWriter(t)("cluster.yaml", fmt.Sprintf(`apiVersion: slipway.dev/v1beta1
kind: Cluster
name: site
versions: {kubernetes: v1.36.3}
controlPlane: {hosts: [{publicAddress: 10.0.0.1, sshPrivateKeyFile: id}]}
containerRuntime:
  containerd:
    registries:
      registry.k8s.io: {mirrors: [%[1]q]}
      ghcr.io: {mirrors: [%[1]q]}
`, src.URL()))
	res, err := config.Load(context.Background(), config.Options{ManifestPath: m, ImageTag: version.ImageTag()})
	if err != nil {
		t.Fatal(err)
	}
	moves, err := mirror.Plan(res.Cluster, "unused.example", version.ImageTag())
	if err != nil {
		t.Fatal(err)
	}
	digests := map[string]v1.Hash{}
	for _, mv := range moves {
		img, err := random.Image(256, 1)
		if err != nil {
			t.Fatal(err)
		}
		ref, err := name.NewTag(mv.From)
		if err != nil {
			t.Fatal(err)
		}
		digests[mv.From] = src.Push(t, ref.RepositoryStr()+":"+ref.TagStr(), img)
	}
	return m, digests
}

// TestMirrorImages runs the command as a user does: -o json lists every image copied with the
// source's digest, progress goes to stderr, a second run finds every image present and writes
// nothing, and --dry-run into an empty path writes nothing either.
func TestMirrorImages(t *testing.T) {
	src, dst := mirrortest.New(t), mirrortest.New(t)
	m, digests := mirrorSite(t, src)
	registry := dst.Host + "/site"
	decode := func(out string) []mirror.Result {
		t.Helper()
		var rs []mirror.Result
		if err := json.Unmarshal([]byte(out), &rs); err != nil {
			t.Fatalf("-o json: %v\n%s", err, out)
		}
		if len(rs) != len(digests) {
			t.Fatalf("%d results for %d images:\n%s", len(rs), len(digests), out)
		}
		return rs
	}

	out, stderr, code := run(t, "", "mirror-images", "-m", m, "--insecure", registry, "-o", "json")
	if code != ExitOK {
		t.Fatalf("code %d:\n%s", code, stderr)
	}
	for _, r := range decode(out) {
		d, ok := digests[r.Source]
		if r.Status != mirror.Copied || !ok || r.Digest != d.String() || !strings.HasPrefix(r.Destination, registry+"/") {
			t.Errorf("result %+v, want %s copied with digest %s", r, r.Source, d)
			continue
		}
		ref, _ := name.NewTag(r.Destination)
		if got := dst.Get(t, ref.RepositoryStr()+":"+ref.TagStr()).Digest; got != d {
			t.Errorf("%s holds %s, the source %s", r.Destination, got, d)
		}
	}
	if !strings.Contains(stderr, fmt.Sprintf("[1/%d] ", len(digests))) || !strings.Contains(stderr, "copied, ") ||
		!strings.Contains(stderr, fmt.Sprintf("%d images for %s in ", len(digests), registry)) {
		t.Errorf("stderr lacks the progress:\n%s", stderr)
	}

	dst.Reset()
	out, stderr, code = run(t, "", "mirror-images", "-m", m, "--insecure", registry, "-o", "json")
	if code != ExitOK {
		t.Fatalf("again: code %d:\n%s", code, stderr)
	}
	for _, r := range decode(out) {
		if r.Status != mirror.Present {
			t.Errorf("again: %s is %s, want present", r.Destination, r.Status)
		}
	}
	if w := dst.Writes(); len(w) != 0 {
		t.Errorf("the second run wrote: %v", w)
	}

	out, stderr, code = run(t, "", "mirror-images", "-m", m, "--insecure", "--dry-run", dst.Host+"/other")
	if code != ExitOK || out != "" || strings.Count(stderr, "would copy from "+src.URL()) != len(digests) {
		t.Errorf("--dry-run: code %d, stdout %q, stderr:\n%s", code, out, stderr)
	}
	if w := dst.Writes(); len(w) != 0 {
		t.Errorf("--dry-run wrote: %v", w)
	}
}

// TestMirrorImagesErrors: wrong command lines are usage errors (2) before anything is read, an
// invalid manifest is 3, and a registry that refuses the push is 1 with its message, the JSON
// still listing every image.
func TestMirrorImagesErrors(t *testing.T) {
	src := mirrortest.New(t)
	m, digests := mirrorSite(t, src)
	refusing := mirrortest.New(t, mirrortest.RefuseWrites(http.StatusForbidden, `{"errors":[{"code":"DENIED","message":"requested access to the resource is denied"}]}`))
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no registry", []string{"mirror-images", "-m", m}, ExitUsage, "mirror-images needs one argument, the registry to copy into"},
		{"two registries", []string{"mirror-images", "-m", m, "a.example", "b.example"}, ExitUsage, "got 2"},
		{"a URL", []string{"mirror-images", "-m", m, "http://a.example"}, ExitUsage, "without a scheme (--insecure allows plain http)"},
		{"credentials", []string{"mirror-images", "-m", m, "robot:hunter2@a.example"}, ExitUsage, "without credentials"},
		{"bad output format", []string{"mirror-images", "-m", m, "-o", "yaml", "a.example"}, ExitUsage, `--output "yaml" is not supported`},
		{"bad platform", []string{"mirror-images", "-m", m, "--platform", "amd64", "a.example"}, ExitUsage, `--platform "amd64": want os/arch`},
		{"no parallelism", []string{"mirror-images", "-m", m, "--parallel", "0", "a.example"}, ExitUsage, "--parallel 0: must be at least 1"},
		{"unknown flag", []string{"mirror-images", "-m", m, "--force", "a.example"}, ExitUsage, "unknown flag: --force"},
		{"no manifest", []string{"mirror-images", "a.example"}, ExitUsage, "pass -m/--manifest"},
		{"refused", []string{"mirror-images", "-m", m, "--insecure", refusing.Host, "-o", "json"}, ExitFailure,
			fmt.Sprintf("%d of %d images failed:", len(digests), len(digests))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, stderr, code := run(t, "", tt.args...)
			if code != tt.code || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit code %d, want %d; stderr does not say %q?\n%s", code, tt.code, tt.want, stderr)
			}
			if strings.Contains(out+stderr, "hunter2") {
				t.Errorf("the password is printed:\n%s%s", out, stderr)
			}
			if tt.code == ExitUsage && (out != "" || len(refusing.Requests()) > 0) {
				t.Errorf("a usage error did something: stdout %q", out)
			}
		})
	}

	out, stderr, _ := run(t, "", "mirror-images", "-m", m, "--insecure", refusing.Host+"/x", "-o", "json")
	var rs []mirror.Result
	if err := json.Unmarshal([]byte(out), &rs); err != nil || len(rs) != len(digests) {
		t.Fatalf("-o json of a refused push: %v\n%s", err, out)
	}
	for _, r := range rs {
		if r.Status != mirror.Failed || !strings.Contains(r.Error, r.Source+" -> "+r.Destination) || !strings.Contains(r.Error, "DENIED: requested access to the resource is denied") {
			t.Errorf("result %+v, want failed naming the image, the destination and the registry's message", r)
		}
		if !strings.Contains(stderr, r.Error) {
			t.Errorf("stderr does not give %s's error:\n%s", r.Source, stderr)
		}
	}
}
