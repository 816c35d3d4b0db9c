package openstacktest

import "strings"

// keypairPublicKey is the public key of a keypair, "" when there is none. Callers hold s.mu.
func (s *Sim) keypairPublicKey(name string) string {
	if k := s.st.keypairs[name]; k != nil {
		return strings.TrimSpace(k.PublicKey)
	}
	return ""
}
