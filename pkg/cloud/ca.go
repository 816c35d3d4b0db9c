package cloud

import (
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// maxCABytes bounds a CA bundle read from a file.
const maxCABytes = 1 << 20

// ReadCA returns the PEM CA bundle that an OS_CACERT-style value holds: the PEM text itself
// (as the controller's credentials Secret carries it) or the path of a PEM file (as openrc
// files set it), read up to 1 MiB. It fails unless the bundle holds a certificate.
func ReadCA(value string) ([]byte, error) {
	data := []byte(value)
	what := "the value"
	if !strings.HasPrefix(strings.TrimSpace(value), "-----BEGIN") {
		what = value
		f, err := os.Open(value)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		if data, err = io.ReadAll(io.LimitReader(f, maxCABytes+1)); err != nil {
			return nil, fmt.Errorf("reading %s: %w", value, err)
		}
		if len(data) > maxCABytes {
			return nil, fmt.Errorf("%s is larger than %d bytes; it should be a PEM CA bundle", value, maxCABytes)
		}
	}
	if !x509.NewCertPool().AppendCertsFromPEM(data) {
		return nil, errors.New(what + " holds no PEM certificate")
	}
	return data, nil
}
