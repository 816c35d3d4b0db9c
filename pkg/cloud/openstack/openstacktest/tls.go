package openstacktest

import (
	"encoding/pem"
	"net/http/httptest"
)

// NewTLS starts a Sim that serves https on a random loopback port, as a production cloud does,
// with a self-signed certificate for 127.0.0.1 that CACert returns. Close it when done.
func NewTLS(opts Options) *Sim {
	s := newSim(opts)
	s.server = httptest.NewTLSServer(s.handler)
	s.st.baseURL = s.server.URL
	return s
}

// CACert returns, PEM-encoded, the certificate a Sim from NewTLS serves (it is its own CA), for
// clients to trust as they would OS_CACERT; nil for a plain http Sim.
func (s *Sim) CACert() []byte {
	c := s.server.Certificate()
	if c == nil {
		return nil
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
}
