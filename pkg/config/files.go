package config

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"

	"github.com/slipway-dev/slipway/pkg/internal/bounded"
)

// MaxCAFileBytes bounds a registry's tlsConfig.caFile: a bundle of every public CA is about
// 200 KiB.
const MaxCAFileBytes = 1 << 20

// ReadCAFile reads a registry's tlsConfig.caFile and checks that it holds PEM certificates and
// nothing else: the file is copied to every host, readable by all, so a private key (or
// anything that is not a certificate) must not pass. Load does not read it (a manifest is
// valid on a machine without the file, like `config print --full`); apply does, before it
// plans.
func ReadCAFile(path string) ([]byte, error) {
	data, err := bounded.ReadFile(path, MaxCAFileBytes)
	if err != nil {
		return nil, err
	}
	rest := data
	certs := 0
	for {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			return nil, fmt.Errorf("holds a PEM block of type %q: only CERTIFICATE blocks may be in a CA file", block.Type)
		}
		if _, err := x509.ParseCertificate(block.Bytes); err != nil {
			return nil, fmt.Errorf("certificate %d: %w", certs+1, err)
		}
		certs++
	}
	if bytes.Contains(rest, []byte("-----BEGIN")) {
		return nil, fmt.Errorf("a PEM block after certificate %d cannot be decoded", certs)
	}
	if certs == 0 {
		return nil, errors.New("holds no PEM certificate (-----BEGIN CERTIFICATE-----)")
	}
	return data, nil
}
