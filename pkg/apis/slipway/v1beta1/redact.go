package v1beta1

import (
	"encoding/base64"
	"maps"
	"net/url"
	"slices"
	"strings"
)

// RedactedValue replaces secrets in output meant for people.
const RedactedValue = "<redacted>"

// Redacted returns a copy of c without its secrets, for showing it (config dump): registry
// passwords, auth strings and identity tokens, the passwords of proxy URLs, and the cloud
// configuration. c is not changed.
func (c *Cluster) Redacted() *Cluster {
	out := *c
	if regs := c.ContainerRuntime.Containerd.Registries; regs != nil {
		out.ContainerRuntime.Containerd.Registries = maps.Clone(regs)
		for name, r := range regs {
			if r.Auth == nil {
				continue
			}
			a := *r.Auth
			for _, s := range []*string{&a.Password, &a.Auth, &a.IdentityToken} {
				if *s != "" {
					*s = RedactedValue
				}
			}
			r.Auth = &a
			out.ContainerRuntime.Containerd.Registries[name] = r
		}
	}
	out.Proxy.HTTP, out.Proxy.HTTPS = RedactURL(c.Proxy.HTTP), RedactURL(c.Proxy.HTTPS)
	if c.CloudProvider.CloudConfig != "" {
		out.CloudProvider.CloudConfig = RedactedValue
	}
	return &out
}

// Secrets lists the secret values of c (registry passwords, auth strings with the password
// they encode, identity tokens, proxy passwords), for hiding them wherever output is shown.
func (c *Cluster) Secrets() []string {
	var out []string
	for _, r := range c.ContainerRuntime.Containerd.Registries {
		if a := r.Auth; a != nil {
			out = append(out, a.Password, a.Auth, a.IdentityToken)
			if dec, err := base64.StdEncoding.DecodeString(a.Auth); err == nil {
				if _, pass, ok := strings.Cut(string(dec), ":"); ok {
					out = append(out, pass)
				}
			}
		}
	}
	for _, p := range []string{c.Proxy.HTTP, c.Proxy.HTTPS} {
		if u, err := url.Parse(p); err == nil && u.User != nil {
			if pass, ok := u.User.Password(); ok {
				out = append(out, pass)
			}
		}
	}
	return slices.DeleteFunc(out, func(s string) bool { return s == "" })
}
