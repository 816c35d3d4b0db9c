package sandboxapi

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// hostIdentity is what makes a host itself: its SSH host key and machine-id. Both are kept in
// the state directory, so a host recreated at the same name is the same machine to SSH clients
// unless a test asks for a new identity.
type hostIdentity struct {
	key       []byte // OpenSSH private key
	pub       string // authorized_keys form, with comment
	machineID string
}

func (sb *Sandbox) identityDir(name string) string { return sb.Path(filepath.Join("hosts", name)) }

// identity loads or creates a host's identity and records its public key in h.
func (sb *Sandbox) identity(h *Host) (hostIdentity, error) {
	dir := sb.identityDir(h.Name)
	signer, key, err := keyPair(filepath.Join(dir, "ssh_host_ed25519_key"), "root@"+h.Name)
	if err != nil {
		return hostIdentity{}, fmt.Errorf("host key of %s: %w", h.Name, err)
	}
	idPath := filepath.Join(dir, "machine-id")
	id, err := os.ReadFile(idPath)
	if errors.Is(err, os.ErrNotExist) {
		s, err := machineID()
		if err != nil {
			return hostIdentity{}, err
		}
		id = []byte(s)
		if err := os.WriteFile(idPath, id, 0o644); err != nil {
			return hostIdentity{}, err
		}
	} else if err != nil {
		return hostIdentity{}, err
	}
	pub := authorizedKey(signer.PublicKey(), "root@"+h.Name)
	h.HostKey = keyOnly(pub)
	return hostIdentity{key: key, pub: pub, machineID: strings.TrimSpace(string(id))}, nil
}

// forgetIdentity removes a host's identity, so that its next creation gets a new one.
func (sb *Sandbox) forgetIdentity(name string) error {
	return os.RemoveAll(sb.identityDir(name))
}
