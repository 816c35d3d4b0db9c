package ccmdeploy

import (
	"fmt"
	"strings"
)

// globalKeys maps the OS_* variables mcdeploy.Credentials collects to the [Global] keys of the
// cloud-controller-manager's cloud.conf, in the order they are written. OS_CACERT is not here:
// the CA travels as a file of its own beside cloud.conf.
var globalKeys = [][2]string{
	{"OS_AUTH_URL", "auth-url"},
	{"OS_USERNAME", "username"},
	{"OS_PASSWORD", "password"},
	{"OS_USER_DOMAIN_NAME", "user-domain-name"},
	{"OS_DOMAIN_NAME", "domain-name"},
	{"OS_PROJECT_ID", "tenant-id"},
	{"OS_PROJECT_NAME", "tenant-name"},
	{"OS_PROJECT_DOMAIN_NAME", "tenant-domain-name"},
	{"OS_REGION_NAME", "region"},
	{"OS_APPLICATION_CREDENTIAL_ID", "application-credential-id"},
	{"OS_APPLICATION_CREDENTIAL_SECRET", "application-credential-secret"},
}

// CloudConfig renders the Secret data of the cloud-controller-manager: cloud.conf with a
// [Global] section from creds (what mcdeploy.Credentials returns, so the same credentials as the
// machine-controller's) and, when creds carry OS_CACERT (the PEM content), ca.crt, which
// cloud.conf names at the path the DaemonSet mounts it. The result holds the credentials: never
// log it. An error names the variable at fault, never its value.
func CloudConfig(creds map[string]string) (map[string][]byte, error) {
	var b strings.Builder
	b.WriteString("[Global]\n")
	for _, kv := range globalKeys {
		v, ok := creds[kv[0]]
		if !ok || v == "" {
			continue
		}
		q, err := gcfgQuote(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", kv[0], err)
		}
		fmt.Fprintf(&b, "%s = %s\n", kv[1], q)
	}
	data := map[string][]byte{}
	if ca := creds["OS_CACERT"]; ca != "" {
		fmt.Fprintf(&b, "ca-file = \"%s/%s\"\n", ConfigDir, CAFile)
		data[CAFile] = []byte(ca)
	}
	data[ConfigFile] = []byte(b.String())
	return data, nil
}

// gcfgQuote quotes v for the INI dialect (gcfg) that the cloud-controller-manager reads, where
// an unquoted value would end at ';' or '#' and lose surrounding blanks. gcfg has no escape for
// a line break or other control characters, so a value holding one is refused.
func gcfgQuote(v string) (string, error) {
	for _, r := range v {
		if r < 0x20 || r == 0x7f {
			return "", fmt.Errorf("holds a control character, which cloud.conf cannot carry")
		}
	}
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(v) + `"`, nil
}

// Secrets returns the values among creds that output and errors must hide: the password or the
// application credential's secret, as given and as cloud.conf quotes them.
func Secrets(creds map[string]string) []string {
	var out []string
	for _, k := range []string{"OS_PASSWORD", "OS_APPLICATION_CREDENTIAL_SECRET"} {
		if v := creds[k]; v != "" {
			out = append(out, v)
			if q, err := gcfgQuote(v); err == nil {
				out = append(out, q[1:len(q)-1])
			}
		}
	}
	return out
}
