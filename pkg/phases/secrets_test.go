package phases

import (
	"regexp"
	"testing"
)

func TestBootstrapTokenFormat(t *testing.T) {
	re := regexp.MustCompile(`^[a-z0-9]{6}\.[a-z0-9]{16}$`)
	seen := map[string]bool{}
	for i := 0; i < 50; i++ {
		tok, err := NewBootstrapToken()
		if err != nil || !re.MatchString(tok) || seen[tok] {
			t.Fatalf("token %q (%v) is malformed or repeated", tok, err)
		}
		seen[tok] = true
	}
	key, err := NewCertificateKey()
	if err != nil || len(key) != 64 {
		t.Fatalf("certificate key %q, %v", key, err)
	}
}
