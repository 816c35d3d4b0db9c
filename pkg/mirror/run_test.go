package mirror_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/config"
	"github.com/slipway-dev/slipway/pkg/imagelist"
	"github.com/slipway-dev/slipway/pkg/mirror"
	"github.com/slipway-dev/slipway/pkg/mirror/mirrortest"
)

// anonymous is a keychain with no credentials: the tests do not read this machine's Docker config.
var anonymous = authn.NewMultiKeychain()

func randomImage(t *testing.T) v1.Image {
	t.Helper()
	img, err := random.Image(512, 2)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// platforms returns an index of a linux/amd64 and a linux/arm64 image, and the images' digests
// by architecture.
func platforms(t *testing.T) (v1.ImageIndex, map[string]v1.Hash) {
	t.Helper()
	idx := v1.ImageIndex(empty.Index)
	digests := map[string]v1.Hash{}
	for _, arch := range []string{"amd64", "arm64"} {
		img := randomImage(t)
		d, err := img.Digest()
		if err != nil {
			t.Fatal(err)
		}
		digests[arch] = d
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: arch}}})
	}
	return idx, digests
}

// upstream stores an image for each reference in src under the reference's repository and tag,
// as a mirror of several registries serves them (registry.k8s.io/pause:3.10 as pause:3.10),
// every other one a two-platform index, and returns their digests by reference.
func upstream(t *testing.T, src *mirrortest.Registry, refs ...string) map[string]v1.Hash {
	t.Helper()
	out := map[string]v1.Hash{}
	for i, r := range refs {
		tag, err := name.NewTag(r, name.StrictValidation)
		if err != nil {
			t.Fatal(err)
		}
		var img remote.Taggable = randomImage(t)
		if i%2 == 0 {
			img, _ = platforms(t)
		}
		out[r] = src.Push(t, tag.RepositoryStr()+":"+tag.TagStr(), img)
	}
	return out
}

// site writes a manifest whose containerd pulls registry.k8s.io, ghcr.io and docker.io through
// the mirror at url, with canal (images on all three) and the default machine-controller.
func site(t *testing.T, url string) string {
	t.Helper()
	m := fmt.Sprintf(`apiVersion: slipway.dev/v1beta1
kind: Cluster
name: site
versions: {kubernetes: v1.36.3}
controlPlane: {hosts: [{publicAddress: 10.0.0.1, sshPrivateKeyFile: id}]}
clusterNetwork: {cni: {canal: {}}}
containerRuntime:
  containerd:
    registries:
      registry.k8s.io: {mirrors: [%[1]q]}
      ghcr.io: {mirrors: [%[1]q]}
      docker.io: {mirrors: [%[1]q]}
`, url)
	p := filepath.Join(t.TempDir(), "cluster.yaml")
	if err := os.WriteFile(p, []byte(m), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func load(t *testing.T, manifest string) *v1beta1.Cluster {
	t.Helper()
	res, err := config.Load(context.Background(), config.Options{ManifestPath: manifest, ImageTag: tag})
	if err != nil {
		t.Fatal(err)
	}
	return res.Cluster
}

// repoTag is a destination reference without its host.
func repoTag(t *testing.T, ref string) string {
	t.Helper()
	tag, err := name.NewTag(ref, name.StrictValidation)
	if err != nil {
		t.Fatal(err)
	}
	return tag.RepositoryStr() + ":" + tag.TagStr()
}

func statuses(rs []mirror.Result) map[mirror.Status]int {
	out := map[mirror.Status]int{}
	for _, r := range rs {
		out[r.Status]++
	}
	return out
}

// blobPuts counts, by digest, the blob uploads a registry finished.
func blobPuts(reqs []mirrortest.Request, into map[string]int) {
	for _, q := range reqs {
		if q.Method == http.MethodPut && strings.Contains(q.Path, "/blobs/uploads/") {
			into[q.Query]++
		}
	}
}

// TestRun copies a cluster's images from the mirror its manifest names into a registry: a dry
// run first (reads only), then the copy (every digest as the source's), then again (every image
// present, nothing written), then after the loss of one manifest (that image again, its blobs
// not uploaded a second time).
func TestRun(t *testing.T) {
	src, dst := mirrortest.New(t), mirrortest.New(t)
	registry := dst.Host + "/site"
	moves, err := mirror.Plan(load(t, site(t, src.URL())), registry, tag)
	if err != nil {
		t.Fatal(err)
	}
	var from []string
	for _, m := range moves {
		from = append(from, m.From)
	}
	want := upstream(t, src, from...)
	o := mirror.Options{Registries: load(t, site(t, src.URL())).ContainerRuntime.Containerd.Registries,
		Insecure: true, Parallel: 3, Keychain: anonymous}
	run := func(dryRun bool) []mirror.Result {
		t.Helper()
		o.DryRun = dryRun
		var done []int
		rs, err := mirror.Run(context.Background(), registry, moves, o, func(i int, _ mirror.Result) { done = append(done, i) })
		if err != nil {
			t.Fatal(err)
		}
		if len(rs) != len(moves) || len(done) != len(moves) {
			t.Fatalf("%d results and %d reports for %d images", len(rs), len(done), len(moves))
		}
		return rs
	}

	rs := run(true)
	if got := statuses(rs); got[mirror.WouldCopy] != len(moves) {
		t.Errorf("dry run: %v, want %d would-copy", got, len(moves))
	}
	if w := dst.Writes(); len(w) != 0 {
		t.Errorf("the dry run wrote to the destination: %v", w)
	}
	if len(dst.Requests()) == 0 {
		t.Error("the dry run did not look at the destination")
	}

	dst.Reset()
	puts := map[string]int{}
	rs = run(false)
	blobPuts(dst.Requests(), puts)
	for i, r := range rs {
		m := moves[i]
		if r.Status != mirror.Copied || r.Source != m.From || r.Destination != m.To || r.From != src.URL() || r.Bytes == 0 {
			t.Errorf("result %+v, want %s copied to %s from %s", r, m.From, m.To, src.URL())
		}
		got := dst.Get(t, repoTag(t, m.To)).Digest
		if got != want[m.From] || r.Digest != want[m.From].String() {
			t.Errorf("%s: destination digest %s (reported %s), source %s", m.To, got, r.Digest, want[m.From])
		}
	}
	for _, r := range src.Requests() {
		if !strings.Contains(r.Query, "ns=") && r.Path != "/v2/" {
			t.Errorf("the mirror was asked %s %s without the registry (?ns=)", r.Method, r.Path)
		}
	}

	dst.Reset()
	rs = run(false)
	if got := statuses(rs); got[mirror.Present] != len(moves) {
		t.Errorf("second run: %v, want %d present", got, len(moves))
	}
	if w := dst.Writes(); len(w) != 0 {
		t.Errorf("the second run wrote to the destination: %v", w)
	}

	// A run that stopped after the blobs and before the manifest.
	lost := moves[0]
	dst.Delete(t, repoTag(t, lost.To))
	dst.Reset()
	rs = run(false)
	blobPuts(dst.Requests(), puts)
	for i, r := range rs {
		if wantStatus := map[bool]mirror.Status{true: mirror.Copied, false: mirror.Present}[i == 0]; r.Status != wantStatus {
			t.Errorf("%s: %s after losing %s's manifest", r.Destination, r.Status, lost.To)
		}
	}
	if got := dst.Get(t, repoTag(t, lost.To)).Digest; got != want[lost.From] {
		t.Errorf("%s is %s again, want %s", lost.To, got, want[lost.From])
	}
	for _, w := range dst.Writes() {
		if strings.Contains(w.Path, "/blobs/") {
			t.Errorf("a blob was written again: %s %s", w.Method, w.Path)
		}
	}
	for digest, n := range puts {
		if n > 1 {
			t.Errorf("blob %s uploaded %d times", digest, n)
		}
	}
	if len(puts) == 0 {
		t.Error("no blob upload was seen: the count is broken")
	}
}

// TestPlatform: an index is copied whole, keeping its digest, unless a platform is asked for:
// then that platform's image is copied under the tag.
func TestPlatform(t *testing.T) {
	src, dst := mirrortest.New(t), mirrortest.New(t)
	idx, byArch := platforms(t)
	digest := src.Push(t, "pause:3.10.2", idx)
	regs := map[string]v1beta1.ContainerdRegistry{"registry.k8s.io": {Mirrors: []string{src.URL()}}}
	moves := []imagelist.Move{{From: "registry.k8s.io/pause:3.10.2", To: dst.Host + "/all/pause:3.10.2"}}
	if _, err := mirror.Run(context.Background(), dst.Host, moves, mirror.Options{Registries: regs, Insecure: true, Keychain: anonymous}, nil); err != nil {
		t.Fatal(err)
	}
	all := dst.Get(t, "all/pause:3.10.2")
	if all.Digest != digest || !all.MediaType.IsIndex() {
		t.Errorf("the whole index: %s %s, want the index %s", all.MediaType, all.Digest, digest)
	}
	for arch, d := range byArch {
		if !dst.Has(t, "all/pause@"+d.String()) {
			t.Errorf("the %s image %s was not copied with its index", arch, d)
		}
	}

	moves[0].To = dst.Host + "/arm/pause:3.10.2"
	arm := &v1.Platform{OS: "linux", Architecture: "arm64"}
	rs, err := mirror.Run(context.Background(), dst.Host, moves, mirror.Options{Registries: regs, Insecure: true, Keychain: anonymous, Platform: arm}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := dst.Get(t, "arm/pause:3.10.2")
	if got.Digest != byArch["arm64"] || got.MediaType.IsIndex() || rs[0].Digest != byArch["arm64"].String() {
		t.Errorf("linux/arm64 only: %s %s (reported %s), want the image %s", got.MediaType, got.Digest, rs[0].Digest, byArch["arm64"])
	}
	rs, err = mirror.Run(context.Background(), dst.Host, moves, mirror.Options{Registries: regs, Insecure: true, Keychain: anonymous, Platform: arm}, nil)
	if err != nil || rs[0].Status != mirror.Present {
		t.Errorf("again: %v %+v, want present", err, rs)
	}

	moves[0].To = dst.Host + "/s390x/pause:3.10.2"
	_, err = mirror.Run(context.Background(), dst.Host, moves, mirror.Options{Registries: regs, Insecure: true, Keychain: anonymous,
		Platform: &v1.Platform{OS: "linux", Architecture: "s390x"}}, nil)
	if err == nil || !strings.Contains(err.Error(), "linux/s390x") {
		t.Errorf("a platform the index lacks: %v", err)
	}
}

// TestDestinationErrors: a destination that refuses the push, that cannot be reached, or that
// is plain http without Insecure fails every image with the destination and what went wrong.
func TestDestinationErrors(t *testing.T) {
	src := mirrortest.New(t)
	src.Push(t, "pause:3.10.2", randomImage(t))
	src.Push(t, "etcd:3.6.8-0", randomImage(t))
	regs := map[string]v1beta1.ContainerdRegistry{"registry.k8s.io": {Mirrors: []string{src.URL()}}}
	tests := []struct {
		name     string
		dst      string
		insecure bool
		want     []string
	}{
		{"403", mirrortest.New(t, mirrortest.RefuseWrites(http.StatusForbidden, `{"errors":[{"code":"DENIED","message":"push access denied: read-only mirror"}]}`)).Host, true,
			[]string{"DENIED: push access denied: read-only mirror", "docker login"}},
		{"401", mirrortest.New(t, mirrortest.RefuseWrites(http.StatusUnauthorized, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`)).Host, true,
			[]string{"UNAUTHORIZED: authentication required", "docker login"}},
		// Said once for the registry, not for each image.
		{"unreachable", closedPort(t), true, []string{"connection refused"}},
		{"plain http without insecure", mirrortest.New(t).Host, false, []string{"the registry speaks plain http: --insecure allows it"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			moves := []imagelist.Move{
				{From: "registry.k8s.io/etcd:3.6.8-0", To: tt.dst + "/etcd:3.6.8-0"},
				{From: "registry.k8s.io/pause:3.10.2", To: tt.dst + "/pause:3.10.2"},
			}
			var reported []mirror.Result
			rs, err := mirror.Run(context.Background(), tt.dst, moves, mirror.Options{Registries: regs, Insecure: tt.insecure, Keychain: anonymous, Parallel: 2},
				func(_ int, r mirror.Result) { reported = append(reported, r) })
			if err == nil || len(reported) != len(moves) {
				t.Fatalf("error %v, %d images reported", err, len(reported))
			}
			for i, m := range moves {
				if rs[i].Status != mirror.Failed || rs[i].Source != m.From || rs[i].Destination != m.To || !strings.Contains(rs[i].Error, tt.dst) {
					t.Errorf("result %+v, want a failure of %s to %s naming %s", rs[i], m.From, m.To, tt.dst)
				}
				if !strings.Contains(err.Error(), rs[i].Error) {
					t.Errorf("the error does not give %s's:\n%v", m.From, err)
				}
				for _, s := range tt.want {
					if !strings.Contains(rs[i].Error, s) {
						t.Errorf("%s: the error does not say %q: %s", m.From, s, rs[i].Error)
					}
				}
			}
		})
	}
}

// TestSkipped: an image the cluster pulls by the same name under any overwriteRegistry (a
// machineController.image the manifest names) is not read nor written.
func TestSkipped(t *testing.T) {
	dst := mirrortest.New(t)
	moves := []imagelist.Move{{From: "quay.example.com/team/mc:v9", To: "quay.example.com/team/mc:v9"}}
	rs, err := mirror.Run(context.Background(), dst.Host, moves, mirror.Options{Insecure: true, Keychain: anonymous}, nil)
	if err != nil || rs[0].Status != mirror.Skipped {
		t.Errorf("%v %+v", err, rs)
	}
	for _, q := range dst.Requests() {
		if q.Path != "/v2/" { // Run checks once that the destination answers
			t.Errorf("the destination was asked %s %s", q.Method, q.Path)
		}
	}
}
