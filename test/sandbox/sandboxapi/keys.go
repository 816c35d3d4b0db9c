package sandboxapi

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/crypto/ssh"
)

// keyPair loads the ed25519 key at path, or creates it (with path.pub) if it does not exist yet,
// so that repeated ups and recreated hosts keep their identities.
func keyPair(path, comment string) (ssh.Signer, []byte, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		_, priv, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			return nil, nil, err
		}
		block, err := ssh.MarshalPrivateKey(priv, comment)
		if err != nil {
			return nil, nil, err
		}
		data = pem.EncodeToMemory(block)
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, nil, err
		}
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return nil, nil, err
		}
	} else if err != nil {
		return nil, nil, err
	}
	signer, err := ssh.ParsePrivateKey(data)
	if err != nil {
		return nil, nil, fmt.Errorf("parsing SSH key %s: %w", path, err)
	}
	pub := authorizedKey(signer.PublicKey(), comment)
	if err := os.WriteFile(path+".pub", []byte(pub+"\n"), 0o644); err != nil {
		return nil, nil, err
	}
	return signer, data, nil
}

// authorizedKey renders a public key as one authorized_keys/known_hosts field pair plus comment.
func authorizedKey(k ssh.PublicKey, comment string) string {
	s := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(k)))
	if comment != "" {
		s += " " + comment
	}
	return s
}

// keyOnly strips the comment: Terraform's ssh_host_keys and known_hosts want "type base64".
func keyOnly(authorized string) string {
	f := strings.Fields(authorized)
	if len(f) < 2 {
		return authorized
	}
	return f[0] + " " + f[1]
}

// machineID returns a random systemd machine-id: 32 lowercase hex digits.
func machineID() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}
