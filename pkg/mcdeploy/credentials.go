package mcdeploy

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// credentialVars are the OpenStack variables the provider reads, the same the openstack CLI does.
var credentialVars = []string{
	"OS_AUTH_URL", "OS_USERNAME", "OS_PASSWORD", "OS_USER_DOMAIN_NAME", "OS_DOMAIN_NAME", "OS_PROJECT_NAME",
	"OS_PROJECT_ID", "OS_PROJECT_DOMAIN_NAME", "OS_REGION_NAME", "OS_APPLICATION_CREDENTIAL_ID",
	"OS_APPLICATION_CREDENTIAL_SECRET", "OS_CACERT",
}

// Credentials collects the OpenStack credentials from the environment for the controller's
// Secret. It checks that one complete set is present and names what is missing; it never
// returns or logs the values in an error.
func Credentials(getenv func(string) string) (map[string]string, error) {
	out := map[string]string{}
	for _, k := range credentialVars {
		if v := getenv(k); v != "" {
			out[k] = v
		}
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
		return nil, fmt.Errorf("cloudProvider.openstack: the machine-controller needs OpenStack credentials from the environment; missing %s (source your openrc file)", strings.Join(missing, ", "))
	}
	return out, nil
}
