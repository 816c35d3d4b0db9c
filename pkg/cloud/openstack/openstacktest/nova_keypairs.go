package openstacktest

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"regexp"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"
)

// Keypair names Nova's schema accepts before and from microversion 2.92.
var (
	keypairName     = regexp.MustCompile(`^[a-zA-Z0-9 _-]+$`)
	keypairName2_92 = regexp.MustCompile(`^[a-zA-Z0-9 _.@-]+$`)
)

func (s *Sim) keypairRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET "+novaBase+"/os-keypairs", s.listKeypairs)
	mux.HandleFunc("POST "+novaBase+"/os-keypairs", s.createKeypair)
	mux.HandleFunc("GET "+novaBase+"/os-keypairs/{name}", s.getKeypair)
	mux.HandleFunc("DELETE "+novaBase+"/os-keypairs/{name}", s.deleteKeypair)
}

func renderKeypair(k *Keypair, mv microversion) map[string]any {
	m := map[string]any{"name": k.Name, "public_key": k.PublicKey, "fingerprint": k.Fingerprint}
	if mv >= 2 {
		m["type"] = k.Type
	}
	return m
}

func (s *Sim) listKeypairs(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []any{}
	for _, k := range sortedBySeq(s.st.keypairs, func(k *Keypair) uint64 { return k.seq }) {
		out = append(out, map[string]any{"keypair": renderKeypair(k, microversionOf(r))})
	}
	writeJSON(w, http.StatusOK, map[string]any{"keypairs": out})
}

func keypairNotFound(name string) *apiError {
	return errf(404, "Keypair %s not found for user %s", name, UserID)
}

func (s *Sim) getKeypair(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k, ok := s.st.keypairs[r.PathValue("name")]
	if !ok {
		writeError(w, serviceCompute, keypairNotFound(r.PathValue("name")))
		return
	}
	m := renderKeypair(k, microversionOf(r))
	m["user_id"], m["id"], m["created_at"] = UserID, k.seq, tsMicros(k.Created)
	m["deleted"], m["deleted_at"], m["updated_at"] = false, nil, nil
	writeJSON(w, http.StatusOK, map[string]any{"keypair": m})
}

func (s *Sim) createKeypair(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Keypair map[string]json.RawMessage `json:"keypair"`
	}
	if !decodeOrFail(w, r, serviceCompute, &body) {
		return
	}
	mv := microversionOf(r)
	var req struct {
		Name      string  `json:"name"`
		PublicKey *string `json:"public_key"`
		Type      string  `json:"type"`
		UserID    string  `json:"user_id"`
	}
	for k := range body.Keypair {
		if min := map[string]microversion{"name": 1, "public_key": 1, "type": 2, "user_id": 10}[k]; min == 0 || mv < min {
			writeError(w, serviceCompute, errf(400, "Invalid input for field/attribute keypair. Additional properties are not allowed ('%s' was unexpected)", k))
			return
		}
	}
	raw, _ := json.Marshal(body.Keypair)
	if err := json.Unmarshal(raw, &req); err != nil {
		writeError(w, serviceCompute, errf(400, "Invalid input for field/attribute keypair: %v", err))
		return
	}
	pattern := keypairName
	if mv >= 92 {
		pattern = keypairName2_92
	}
	switch {
	case body.Keypair == nil:
		writeError(w, serviceCompute, errf(400, "Invalid input for field/attribute keypair. Value: None. None is not of type 'object'"))
		return
	case len(req.Name) > 255 || !pattern.MatchString(req.Name):
		writeError(w, serviceCompute, errf(400, "Invalid input for field/attribute name. Value: %s. '%s' does not match '%s'", req.Name, req.Name, pattern))
		return
	case req.PublicKey == nil && mv >= 92:
		writeError(w, serviceCompute, errf(400, "Invalid input for field/attribute keypair. 'public_key' is a required property"))
		return
	case req.Type != "" && req.Type != "ssh":
		writeError(w, serviceCompute, errf(400, "Keypair data is invalid: the simulator holds ssh keypairs only, not %q", req.Type))
		return
	case req.UserID != "" && req.UserID != UserID:
		writeError(w, serviceCompute, errf(403, "Policy doesn't allow os_compute_api:os-keypairs:create to be performed."))
		return
	}
	k := &Keypair{Name: req.Name, Type: "ssh", Created: time.Now()}
	var private string
	if req.PublicKey != nil {
		pub, _, _, _, err := ssh.ParseAuthorizedKey([]byte(*req.PublicKey))
		if err != nil {
			writeError(w, serviceCompute, errf(400, "Keypair data is invalid: failed to generate fingerprint"))
			return
		}
		// Nova keeps the key as sent, trailing newline included (Terraform's file() has one).
		k.PublicKey, k.Fingerprint = *req.PublicKey, ssh.FingerprintLegacyMD5(pub)
	} else {
		var err error
		if private, k.PublicKey, k.Fingerprint, err = generateKeypair(); err != nil {
			writeError(w, serviceCompute, errf(500, "generating a keypair: %v", err))
			return
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.st.keypairs[k.Name]; ok {
		writeError(w, serviceCompute, errf(409, "Key pair '%s' already exists.", k.Name))
		return
	}
	if len(s.st.keypairs) >= s.quotaLimit(serviceCompute, "key_pairs") {
		writeError(w, serviceCompute, errf(403, "Quota exceeded, too many key pairs."))
		return
	}
	k.seq = s.st.next()
	s.st.keypairs[k.Name] = k
	m := renderKeypair(k, mv)
	m["user_id"] = UserID
	if private != "" {
		m["private_key"] = private
	}
	status := http.StatusOK
	if mv >= 2 {
		status = http.StatusCreated
	}
	writeJSON(w, status, map[string]any{"keypair": m})
}

// generateKeypair makes an RSA key as Nova does when no public key is given: the private key in
// PKCS#1 PEM, the public key in authorized_keys form with Nova's comment.
func generateKeypair() (private, public, fingerprint string, err error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return "", "", "", err
	}
	pub, err := ssh.NewPublicKey(&key.PublicKey)
	if err != nil {
		return "", "", "", err
	}
	private = string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}))
	public = strings.TrimSpace(string(ssh.MarshalAuthorizedKey(pub))) + " Generated-by-Nova"
	return private, public, ssh.FingerprintLegacyMD5(pub), nil
}

func (s *Sim) deleteKeypair(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	name := r.PathValue("name")
	if _, ok := s.st.keypairs[name]; !ok {
		writeError(w, serviceCompute, keypairNotFound(name))
		return
	}
	delete(s.st.keypairs, name)
	if microversionOf(r) >= 2 {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	w.WriteHeader(http.StatusAccepted)
}
