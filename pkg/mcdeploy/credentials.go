package mcdeploy

import (
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/slipway-dev/slipway/pkg/cloud"
)

// credentialVars are the OpenStack variables the provider reads, the same the openstack CLI
// does, and the operator's choices of what Machines may do beyond the defaults.
var credentialVars = []string{
	"OS_AUTH_URL", "OS_USERNAME", "OS_PASSWORD", "OS_USER_DOMAIN_NAME", "OS_DOMAIN_NAME", "OS_PROJECT_NAME",
	"OS_PROJECT_ID", "OS_PROJECT_DOMAIN_NAME", "OS_REGION_NAME", "OS_APPLICATION_CREDENTIAL_ID",
	"OS_APPLICATION_CREDENTIAL_SECRET", "OS_CACERT", cloud.EnvAllowMachineCloud, cloud.EnvAllowHTTP,
}

// Credentials collects the cloud configuration from the environment for the machine-controller's
// Secret, which is all the controller knows of the cloud: the OpenStack credentials, the CA
// (OS_CACERT names a file here; the Secret carries its PEM content, which the controller's pod
// could not read otherwise), and the variables by which an operator lets Machines choose their
// own cloud (SLIPWAY_ALLOW_MACHINE_CLOUD) or accepts an http:// Keystone (SLIPWAY_ALLOW_HTTP).
// It checks that one complete set is present and names what is missing; it never returns or
// logs the values in an error. The OpenStack cloud-controller-manager's cloud.conf is built from
// the same result (pkg/ccmdeploy), so that both reach the cloud as one identity.
func Credentials(getenv func(string) string) (map[string]string, error) {
	out := map[string]string{}
	for _, k := range credentialVars {
		if v := getenv(k); v != "" {
			out[k] = v
		}
	}
	for _, k := range []string{cloud.EnvAllowMachineCloud, cloud.EnvAllowHTTP} {
		if v, ok := out[k]; ok {
			if _, err := strconv.ParseBool(v); err != nil {
				return nil, fmt.Errorf("%s=%q: must be true or false", k, v)
			}
		}
	}
	if err := checkAuthURL(out); err != nil {
		return nil, err
	}
	if ca, ok := out["OS_CACERT"]; ok {
		pem, err := cloud.ReadCA(ca)
		if err != nil {
			return nil, fmt.Errorf("OS_CACERT: %w", err)
		}
		out["OS_CACERT"] = string(pem)
	}
	var missing []string
	need := func(keys ...string) {
		for _, k := range keys {
			if out[k] == "" {
				missing = append(missing, k)
			}
		}
	}
	need("OS_AUTH_URL")
	appCred := out["OS_APPLICATION_CREDENTIAL_ID"] != "" || out["OS_APPLICATION_CREDENTIAL_SECRET"] != ""
	if appCred {
		need("OS_APPLICATION_CREDENTIAL_ID", "OS_APPLICATION_CREDENTIAL_SECRET")
		if out["OS_USERNAME"] != "" || out["OS_PASSWORD"] != "" {
			return nil, errors.New("the environment sets both an application credential (OS_APPLICATION_CREDENTIAL_*) and a user (OS_USERNAME/OS_PASSWORD); set one")
		}
	} else {
		need("OS_USERNAME", "OS_PASSWORD")
		if out["OS_PROJECT_NAME"] == "" && out["OS_PROJECT_ID"] == "" {
			missing = append(missing, "OS_PROJECT_NAME or OS_PROJECT_ID")
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return nil, fmt.Errorf("cloudProvider.openstack: the machine-controller and the cloud-controller-manager need OpenStack credentials from the environment; missing %s (source your openrc file)", strings.Join(missing, ", "))
	}
	return out, nil
}

// checkAuthURL refuses an http:// Keystone unless the operator accepted it: the controller
// would send its password there unencrypted.
func checkAuthURL(vars map[string]string) error {
	raw := vars["OS_AUTH_URL"]
	if raw == "" {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return fmt.Errorf("OS_AUTH_URL %q is not an https:// URL", raw)
	}
	if allow, _ := strconv.ParseBool(vars[cloud.EnvAllowHTTP]); u.Scheme == "http" && !allow {
		return fmt.Errorf("OS_AUTH_URL %q is http://: the machine-controller would send the credentials unencrypted; "+
			"use https://, or set %s=true to accept that", raw, cloud.EnvAllowHTTP)
	}
	return nil
}
