package bootstrap

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/slipway-dev/slipway/pkg/scripts"
)

// Where apply writes what of the node settings is secret, and who may read it. A pool machine
// fetches it once with its bootstrap token, before its setup, so that its user-data, which every
// pod on the node can read from the metadata service, carries no credential but that token.
const (
	CredentialsNamespace = "kube-system"
	CredentialsSecret    = "slipway-node-credentials"
	// CredentialsGroup is the bootstrap token group that may get CredentialsSecret, and nothing
	// else (manifests/machine-controller/node-credentials.yaml). The machine-controller's
	// tokens carry it (auth-extra-groups); kubeadm's, and apply's for static workers, do not.
	CredentialsGroup = "system:bootstrappers:slipway:node-credentials"
)

// Credentials returns the data of CredentialsSecret for the node settings s: the registries'
// credentials and the proxy, as scripts.NodeCredentials renders them. It is empty when the
// manifest has neither, and then pool machines fetch nothing.
func Credentials(s Settings) (map[string][]byte, error) {
	files, err := scripts.NodeCredentials(&s.Cluster)
	if err != nil {
		return nil, fmt.Errorf("the node credentials: %w", err)
	}
	out := make(map[string][]byte, len(files))
	for k, v := range files {
		out[k] = []byte(v)
	}
	return out, nil
}

// Paths on the new machine for the fetch.
const (
	credentialsDir = "/run/slipway/credentials"     // tmpfs, removed when the runner ends
	fetchConfig    = "/run/slipway/fetch.json"      // holds the bootstrap token: removed after the fetch
	fetcher        = nodeDir + "/fetch-credentials" // fetch-credentials.py
	fetchTimeout   = 300                            // seconds the fetcher tries to reach the API server
)

//go:embed fetch-credentials.py
var fetchScript string

// fetchConfiguration is the fetcher's configuration: where to ask, what to trust, as whom, and
// which files to write where.
func fetchConfiguration(c Config, keys []string) (string, error) {
	b, err := json.MarshalIndent(map[string]any{
		"server":         c.APIServerEndpoint,
		"caCertHash":     c.CACertHash,
		"token":          c.Token,
		"namespace":      CredentialsNamespace,
		"name":           CredentialsSecret,
		"group":          CredentialsGroup,
		"keys":           keys,
		"dir":            credentialsDir,
		"timeoutSeconds": fetchTimeout,
	}, "", "  ")
	if err != nil {
		return "", fmt.Errorf("encoding the credentials fetch: %w", err)
	}
	return string(b) + "\n", nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
