package phases

import (
	"crypto/rand"
	"encoding/hex"
	"math/big"
)

const tokenAlphabet = "abcdefghijklmnopqrstuvwxyz0123456789"

// NewBootstrapToken returns a kubeadm bootstrap token ([a-z0-9]{6}.[a-z0-9]{16}).
func NewBootstrapToken() (string, error) {
	id, err := randomString(6)
	if err != nil {
		return "", err
	}
	secret, err := randomString(16)
	if err != nil {
		return "", err
	}
	return id + "." + secret, nil
}

// NewCertificateKey returns a key for kubeadm's upload-certs (32 random bytes, hex).
func NewCertificateKey() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

func randomString(n int) (string, error) {
	out := make([]byte, n)
	max := big.NewInt(int64(len(tokenAlphabet)))
	for i := range out {
		v, err := rand.Int(rand.Reader, max)
		if err != nil {
			return "", err
		}
		out[i] = tokenAlphabet[v.Int64()]
	}
	return string(out), nil
}
