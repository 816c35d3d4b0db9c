package mirror_test

import (
	"context"
	"net"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/imagelist"
	"github.com/slipway-dev/slipway/pkg/mirror"
	"github.com/slipway-dev/slipway/pkg/mirror/mirrortest"
)

// closedPort returns a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// TestSources: mirrors are tried in order, then the registry itself; the first that has the
// image is read, and when none has it the error names every place tried.
func TestSources(t *testing.T) {
	empty, has, later := mirrortest.New(t), mirrortest.New(t), mirrortest.New(t)
	// The image's own registry is a closed port, so that nothing leaves this machine.
	upstreamHost := closedPort(t)
	ref := upstreamHost + "/team/app:v1"
	want := has.Push(t, "team/app:v1", randomImage(t))
	later.Push(t, "team/app:v1", randomImage(t))
	dst := mirrortest.New(t)
	moves := []imagelist.Move{{From: ref, To: dst.Host + "/team/app:v1"}}
	regs := map[string]v1beta1.ContainerdRegistry{upstreamHost: {Mirrors: []string{empty.URL(), has.URL(), later.URL()}}}
	rs, err := mirror.Run(context.Background(), dst.Host, moves, mirror.Options{Registries: regs, Insecure: true, Keychain: anonymous}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rs[0].From != has.URL() || rs[0].Digest != want.String() {
		t.Errorf("read from %s (%s), want %s (%s)", rs[0].From, rs[0].Digest, has.URL(), want)
	}
	if len(empty.Requests()) == 0 || len(later.Requests()) != 0 {
		t.Errorf("the first mirror got %d requests, the third %d: want some and none", len(empty.Requests()), len(later.Requests()))
	}
	for _, q := range empty.Requests() {
		if ns, _ := url.ParseQuery(q.Query); strings.Contains(q.Path, "/manifests/") && ns.Get("ns") != upstreamHost {
			t.Errorf("mirror asked %s?%s, want ?ns=%s as containerd asks", q.Path, q.Query, upstreamHost)
		}
	}

	// "*" serves a registry without an entry of its own; a mirror URL may have a path.
	cache := mirrortest.New(t, mirrortest.UnderPath("/cache"))
	want = cache.Push(t, "team/app:v1", randomImage(t))
	regs = map[string]v1beta1.ContainerdRegistry{"*": {Mirrors: []string{cache.URL() + "/v2"}}}
	moves[0].To = dst.Host + "/cached/app:v1"
	rs, err = mirror.Run(context.Background(), dst.Host, moves, mirror.Options{Registries: regs, Insecure: true, Keychain: anonymous}, nil)
	if err != nil || rs[0].Digest != want.String() {
		t.Fatalf("through * and a mirror path: %v, %+v", err, rs)
	}

	regs = map[string]v1beta1.ContainerdRegistry{upstreamHost: {Mirrors: []string{empty.URL(), "http://" + closedPort(t)}}}
	_, err = mirror.Run(context.Background(), dst.Host, moves, mirror.Options{Registries: regs, Insecure: true, Keychain: anonymous}, nil)
	if err == nil {
		t.Fatal("no error when no place has the image")
	}
	for _, s := range []string{ref, empty.URL() + " (mirror): ", "NAME_UNKNOWN", regs[upstreamHost].Mirrors[1] + " (mirror): ", "connection refused",
		"https://" + upstreamHost + " (the registry): "} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("the error does not say %q:\n%v", s, err)
		}
	}
}

// TestTLSAndCredentials: a mirror and the destination over TLS, trusted through the manifest's
// tlsConfig.caFile, the mirror with the manifest's credentials; none of it is printed.
func TestTLSAndCredentials(t *testing.T) {
	const secret = "hunter2-very-secret"
	src := mirrortest.New(t, mirrortest.TLS(), mirrortest.BasicAuth("puller", secret))
	dst := mirrortest.New(t, mirrortest.TLS())
	want := src.Push(t, "pause:3.10.2", randomImage(t))
	moves := []imagelist.Move{{From: "registry.k8s.io/pause:3.10.2", To: dst.Host + "/pause:3.10.2"}}
	regs := map[string]v1beta1.ContainerdRegistry{
		"registry.k8s.io": {Mirrors: []string{src.URL()}, TLSConfig: &v1beta1.RegistryTLSConfig{CAFile: src.CAFile(t)},
			Auth: &v1beta1.RegistryAuth{Username: "puller", Password: secret}},
		dst.Host: {TLSConfig: &v1beta1.RegistryTLSConfig{CAFile: dst.CAFile(t)}},
	}
	rs, err := mirror.Run(context.Background(), dst.Host, moves, mirror.Options{Registries: regs, Keychain: anonymous}, nil)
	if err != nil || rs[0].Status != mirror.Copied || dst.Get(t, "pause:3.10.2").Digest != want {
		t.Fatalf("over TLS: %v %+v", err, rs)
	}
	for _, q := range src.Requests() {
		if q.Path != "/v2/" && !q.Authorized {
			t.Errorf("%s %s without the manifest's credentials", q.Method, q.Path)
		}
	}

	tests := []struct {
		name   string
		change func(map[string]v1beta1.ContainerdRegistry)
		want   string
	}{
		{"a wrong password", func(r map[string]v1beta1.ContainerdRegistry) {
			k := r["registry.k8s.io"]
			k.Auth = &v1beta1.RegistryAuth{Username: "puller", Password: secret + "-not"}
			r["registry.k8s.io"] = k
		}, "UNAUTHORIZED"},
		{"a mirror whose CA is not given", func(r map[string]v1beta1.ContainerdRegistry) {
			k := r["registry.k8s.io"]
			k.TLSConfig = nil
			r["registry.k8s.io"] = k
		}, "certificate"},
		{"a destination whose CA is not given", func(r map[string]v1beta1.ContainerdRegistry) { delete(r, dst.Host) }, "certificate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := map[string]v1beta1.ContainerdRegistry{}
			for k, v := range regs {
				r[k] = v
			}
			tt.change(r)
			moves[0].To = dst.Host + "/other/pause:3.10.2"
			rs, err := mirror.Run(context.Background(), dst.Host, moves, mirror.Options{Registries: r, Keychain: anonymous}, nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) || rs[0].Status != mirror.Failed {
				t.Errorf("error %v, want one saying %q", err, tt.want)
			}
			if err != nil && strings.Contains(err.Error()+rs[0].Error, secret) {
				t.Errorf("the password is printed: %v", err)
			}
		})
	}
}

// TestNoCredentialsOverHTTP: a plain-http mirror gets no credentials, neither the manifest's nor
// the keychain's, unless its registry's entry sets insecureCredentials; the registry itself, over
// https, still gets the manifest's.
func TestNoCredentialsOverHTTP(t *testing.T) {
	const secret = "hunter2-very-secret"
	src := mirrortest.New(t, mirrortest.BasicAuth("puller", secret)) // plain http
	dst := mirrortest.New(t)
	want := src.Push(t, "team/app:v1", randomImage(t))
	// The image's own registry is a closed port, so that nothing leaves this machine.
	upstream := closedPort(t)
	moves := []imagelist.Move{{From: upstream + "/team/app:v1", To: dst.Host + "/team/app:v1"}}
	auth := &v1beta1.RegistryAuth{Username: "puller", Password: secret}
	keychain := staticKeychain{host: src.Host, auth: authn.AuthConfig{Username: "puller", Password: secret}}
	for name, tc := range map[string]struct {
		reg      v1beta1.ContainerdRegistry
		keychain authn.Keychain
		copied   bool
	}{
		"the manifest's credentials":                     {reg: v1beta1.ContainerdRegistry{Mirrors: []string{src.URL()}, Auth: auth}},
		"the keychain's credentials":                     {reg: v1beta1.ContainerdRegistry{Mirrors: []string{src.URL()}}, keychain: keychain},
		"the manifest's, with insecureCredentials: true": {reg: v1beta1.ContainerdRegistry{Mirrors: []string{src.URL()}, Auth: auth, InsecureCredentials: true}, copied: true},
		"the keychain's, with insecureCredentials: true": {reg: v1beta1.ContainerdRegistry{Mirrors: []string{src.URL()}, InsecureCredentials: true}, keychain: keychain, copied: true},
	} {
		t.Run(name, func(t *testing.T) {
			src.Reset()
			kc := tc.keychain
			if kc == nil {
				kc = anonymous
			}
			regs := map[string]v1beta1.ContainerdRegistry{upstream: tc.reg}
			rs, err := mirror.Run(context.Background(), dst.Host, moves, mirror.Options{Registries: regs, Insecure: true, Keychain: kc}, nil)
			authorized := 0
			for _, q := range src.Requests() {
				if q.Authorized {
					authorized++
				}
			}
			if !tc.copied {
				if err == nil || authorized > 0 {
					t.Errorf("copied (%v) with %d requests carrying the credentials to the http mirror; want none and a failure", err, authorized)
				}
				return
			}
			if err != nil || rs[0].Digest != want.String() || authorized == 0 {
				t.Errorf("%v, %+v, %d requests with the credentials: want the image read with them", err, rs, authorized)
			}
		})
	}
}

// staticKeychain gives auth for host, and nothing for any other registry.
type staticKeychain struct {
	host string
	auth authn.AuthConfig
}

func (k staticKeychain) Resolve(r authn.Resource) (authn.Authenticator, error) {
	if r.RegistryStr() != k.host {
		return authn.Anonymous, nil
	}
	return authn.FromConfig(k.auth), nil
}
