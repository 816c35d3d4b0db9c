package mirror

import (
	"fmt"
	"net/url"
	"path"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// place is one registry API an image is read from or written to.
type place struct {
	// url names it in messages: https://registry.k8s.io, http://10.0.0.5:5000/cache.
	url string
	// mirror says it is a mirror of the image's registry rather than the registry itself.
	mirror bool
	reg    name.Registry
	// transport reaches it (see route).
	transport *route
	auth      remote.Option
}

// at is ref's repository and tag at p.
func (p place) at(ref name.Tag) name.Tag {
	return p.reg.Repo(ref.RepositoryStr()).Tag(ref.TagStr())
}

// hostsName is the name containerd's certs.d knows ref's registry by: Docker Hub is docker.io,
// which go-containerregistry spells index.docker.io.
func hostsName(ref name.Reference) string {
	if h := ref.Context().RegistryStr(); h != name.DefaultRegistry {
		return h
	}
	return "docker.io"
}

// sources lists where containerd on the hosts would pull ref from, in the order it tries them:
// the mirrors of ref's registry in the manifest (of "*" when the registry has no entry), then
// the registry itself over https. TLS settings apply to the mirrors and, for a registry of its
// own entry, to the registry too; credentials from the manifest to both, as slipway configures
// containerd; without them the keychain answers for each host. An http:// mirror is read
// without credentials unless the entry sets insecureCredentials.
func (c *copier) sources(ref name.Tag) ([]place, error) {
	host := hostsName(ref)
	cfg, named := c.o.Registries[host]
	if !named {
		cfg = c.o.Registries["*"]
	}
	auth := remote.WithAuthFromKeychain(c.keychain)
	if a := cfg.Auth; named && a != nil {
		auth = remote.WithAuth(authn.FromConfig(authn.AuthConfig{Username: a.Username, Password: a.Password, Auth: a.Auth, IdentityToken: a.IdentityToken}))
	}
	base, err := c.transports.get(cfg.TLSConfig)
	if err != nil {
		return nil, fmt.Errorf("registry %s: %w", host, err)
	}
	var out []place
	for _, m := range cfg.Mirrors {
		p, err := mirrorPlace(m, host)
		if err != nil {
			return nil, fmt.Errorf("registry %s: %w", host, err)
		}
		p.transport.base, p.auth = base, auth
		if p.transport.scheme == "http" && !cfg.InsecureCredentials {
			// No credentials cross plain http, the manifest's or the keychain's, unless the
			// manifest says so (as validation refuses the manifest's for containerd).
			p.auth = remote.WithAuth(authn.Anonymous)
		}
		out = append(out, p)
	}
	server := base
	if !named {
		// "*" configures the mirrors only: the registry itself is reached with the system's roots.
		if server, err = c.transports.get(nil); err != nil {
			return nil, err
		}
	}
	reg := ref.Context().Registry
	return append(out, place{url: "https://" + reg.RegistryStr(), reg: reg, auth: auth,
		transport: &route{base: server, host: reg.RegistryStr(), scheme: "https"}}), nil
}

// mirrorPlace is the place a mirror URL of the manifest names, for the registry ns.
func mirrorPlace(mirror, ns string) (place, error) {
	u, err := url.Parse(mirror)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return place{}, fmt.Errorf("mirror %q is not an http or https URL", mirror)
	}
	var opts []name.Option
	if u.Scheme == "http" {
		opts = append(opts, name.Insecure)
	}
	reg, err := name.NewRegistry(u.Host, opts...)
	if err != nil {
		return place{}, fmt.Errorf("mirror %q: %w", mirror, err)
	}
	// containerd asks <url>/v2/... and keeps a path the URL already ends with /v2.
	prefix := ""
	if p := path.Clean("/" + u.Path); p != "/" {
		prefix = strings.TrimSuffix(p, "/v2")
	}
	return place{url: strings.TrimSuffix(mirror, "/"), mirror: true, reg: reg,
		transport: &route{host: u.Host, scheme: u.Scheme, prefix: prefix, ns: ns}}, nil
}
