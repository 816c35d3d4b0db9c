package openstack

import (
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/slipway-dev/slipway/pkg/cloud"
)

// Policy is what the operator allows beyond the safe defaults; the zero value allows nothing.
type Policy struct {
	// AllowMachineCloud lets a cloudProviderSpec name its own Keystone endpoint, domain, project
	// and credentials (cloud.EnvAllowMachineCloud). Even then the controller's own credentials
	// are never sent to an endpoint a Machine names (see credentialsOf).
	AllowMachineCloud bool
	// AllowHTTP accepts http:// for Keystone and the endpoints of its catalog (cloud.EnvAllowHTTP).
	AllowHTTP bool
	// AuthURL is the controller's own Keystone (OS_AUTH_URL). A cloudProviderSpec may name it
	// even without AllowMachineCloud, because naming it chooses nothing: the managed clouds'
	// manifests write the cloud's own identity endpoint into their specs. It is compared
	// normalised (sameEndpoint). Empty, every identityEndpoint chooses.
	AuthURL string
}

// chooses reports whether a cloud field's value chooses something: any value but the empty
// one, and, for the identity endpoint, the controller's own.
func (pol Policy) chooses(name, value string) bool {
	return value != "" && !(name == "identityEndpoint" && sameEndpoint(value, pol.AuthURL))
}

// sameEndpoint reports whether two Keystone URLs name the same endpoint once normalised: the
// scheme and host in lower case, the scheme's default port left out, the path without trailing
// slashes and without a final /v3 (the version the clients discover or were given).
func sameEndpoint(a, b string) bool {
	na, ok := normalEndpoint(a)
	nb, ok2 := normalEndpoint(b)
	return ok && ok2 && na == nb
}

// normalEndpoint is u normalised for sameEndpoint; a URL with user info, a query or a fragment
// has no normal form, and so equals nothing.
func normalEndpoint(raw string) (string, bool) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return "", false
	}
	scheme, host, port := strings.ToLower(u.Scheme), strings.ToLower(u.Hostname()), u.Port()
	if (scheme == "https" && port == "443") || (scheme == "http" && port == "80") {
		port = ""
	}
	if port != "" || strings.Contains(host, ":") {
		host = net.JoinHostPort(host, port)
		host = strings.TrimSuffix(host, ":")
	}
	path := strings.TrimRight(u.EscapedPath(), "/")
	path = strings.TrimRight(strings.TrimSuffix(path, "/v3"), "/")
	return scheme + "://" + host + path, true
}

// PolicyFromEnv reads the Policy from the controller's configuration variables.
func PolicyFromEnv(lookup func(string) (string, bool)) (Policy, error) {
	var p Policy
	for _, v := range []struct {
		name string
		dst  *bool
	}{{cloud.EnvAllowMachineCloud, &p.AllowMachineCloud}, {cloud.EnvAllowHTTP, &p.AllowHTTP}} {
		raw, ok := lookup(v.name)
		if !ok || raw == "" {
			continue
		}
		b, err := strconv.ParseBool(raw)
		if err != nil {
			return Policy{}, fmt.Errorf("%s=%q: must be true or false", v.name, raw)
		}
		*v.dst = b
	}
	p.AuthURL, _ = lookup("OS_AUTH_URL")
	return p, nil
}

// checkCloudFields refuses the fields that choose the cloud or the identity unless allowed.
func (pol Policy) checkCloudFields(s *Spec, path *field.Path) field.ErrorList {
	if pol.AllowMachineCloud {
		return nil
	}
	var errs field.ErrorList
	for _, f := range specFields {
		if f.use != fieldWhat && pol.chooses(f.name, *f.target(s).(*string)) {
			errs = append(errs, pol.forbiddenCloudField(path.Child(f.name), f.name))
		}
	}
	return errs
}

// forbiddenCloudField is the refusal of a field that chooses the cloud or the identity. For the
// identity endpoint it names the controller's own, which a spec may name.
func (pol Policy) forbiddenCloudField(fp *field.Path, name string) *field.Error {
	what := "chooses the cloud or the identity, which"
	if name == "identityEndpoint" {
		own := pol.AuthURL
		if own == "" {
			own = "none configured"
		}
		what = fmt.Sprintf("is not the machine-controller's own Keystone (%s); the cloud and the identity", own)
	}
	return field.Forbidden(fp, what+" come only from the machine-controller's "+
		"configuration (its credentials Secret); an operator may allow Machines to choose them with "+
		cloud.EnvAllowMachineCloud+"=true")
}

// checkURL accepts https:// endpoints, and http:// ones only when allowed.
func (pol Policy) checkURL(fp *field.Path, raw string) field.ErrorList {
	u, err := url.Parse(raw)
	switch {
	case err != nil || u.Host == "":
		return field.ErrorList{field.Invalid(fp, raw, "must be an absolute https:// URL")}
	case u.Scheme == "https":
		return nil
	case u.Scheme == "http" && pol.AllowHTTP:
		return nil
	case u.Scheme == "http":
		return field.ErrorList{field.Invalid(fp, raw, "must be https://: over http:// the credentials and tokens "+
			"travel unencrypted (an operator may accept that with "+cloud.EnvAllowHTTP+"=true)")}
	}
	return field.ErrorList{field.Invalid(fp, raw, "must be an https:// URL")}
}

// SpecCheck is the admission check of an OpenStack cloudProviderSpec under this policy: the
// fields that choose the cloud or the identity (unless allowed; empty ones, and the controller's
// own identity endpoint, choose nothing), and references, which may only
// point into the Machine's namespace and only name a Secret for a credential. It reads nothing;
// everything else is checked by the controller, which reports it on the Machine.
func (pol Policy) SpecCheck() cloud.SpecCheck {
	return func(namespace string, raw json.RawMessage, path *field.Path) field.ErrorList {
		var obj map[string]json.RawMessage
		if len(raw) == 0 || json.Unmarshal(raw, &obj) != nil {
			return nil // not an object: the controller's strict decoding says so on the Machine
		}
		var errs field.ErrorList
		for _, f := range specFields {
			for _, name := range append([]string{f.name}, f.aliases...) {
				v, ok := obj[name]
				if !ok || string(v) == "null" || string(v) == `""` {
					continue
				}
				fp := path.Child(name)
				var str string
				if f.use != fieldWhat && !pol.AllowMachineCloud && (json.Unmarshal(v, &str) != nil || pol.chooses(f.name, str)) {
					errs = append(errs, pol.forbiddenCloudField(fp, f.name))
					continue
				}
				errs = append(errs, checkRefs(v, f, namespace, fp)...)
				var endpoint string
				if f.name == "identityEndpoint" && json.Unmarshal(v, &endpoint) == nil {
					errs = append(errs, pol.checkURL(fp, endpoint)...)
				}
			}
		}
		return errs
	}
}

// checkRefs checks the references in one field's value without reading them.
func checkRefs(v json.RawMessage, f specField, namespace string, fp *field.Path) field.ErrorList {
	one := func(v json.RawMessage, fp *field.Path) field.ErrorList {
		if len(v) == 0 || v[0] != '{' {
			return nil
		}
		if _, _, ferr := parseRef(v, namespace, f.use == fieldCredential, fp); ferr != nil {
			return field.ErrorList{ferr}
		}
		return nil
	}
	switch f.kind {
	case kindString, kindBool, kindDuration:
		return one(v, fp)
	case kindStrings:
		var items []json.RawMessage
		if json.Unmarshal(v, &items) != nil {
			return nil
		}
		var errs field.ErrorList
		for i, it := range items {
			errs = append(errs, one(it, fp.Index(i))...)
		}
		return errs
	}
	return nil
}
