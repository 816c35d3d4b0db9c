package encryption

import (
	"bufio"
	"bytes"
	"strings"
)

// LoadedMetric is the kube-apiserver metric that names, by hash, the encryption configuration
// the API server uses: set when it starts and after every successful automatic reload. Its name
// and its hash label are the same in k8s.io/apiserver v0.35, v0.36 and v0.37
// (pkg/server/options/encryptionconfig/metrics): apiserver_encryption_config_controller_ is
// the namespace and subsystem, last_config_info the name, and hash is "sha256:" and the hex
// SHA-256 of the file's bytes (Hash). The counter automatic_reloads_total, in the same
// package, says that a reload happened but not which file it read; this one says which, so a
// wait compares it with the hash of the file slipway wrote and no restart is needed.
const LoadedMetric = "apiserver_encryption_config_controller_last_config_info"

// LoadedHash returns the hash of the encryption configuration an API server reports in its
// /metrics text, and false when it reports none (no encryption configuration, or a version
// without the metric).
func LoadedHash(metrics []byte) (string, bool) {
	s := bufio.NewScanner(bytes.NewReader(metrics))
	s.Buffer(make([]byte, 64<<10), 1<<20)
	for s.Scan() {
		line := s.Text()
		labels, ok := strings.CutPrefix(line, LoadedMetric+"{")
		if !ok {
			continue
		}
		labels, _, ok = strings.Cut(labels, "}")
		if !ok {
			continue
		}
		for _, l := range strings.Split(labels, ",") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(l), `hash="`); ok {
				return strings.TrimSuffix(v, `"`), true
			}
		}
	}
	return "", false
}
