package applied

import "testing"

func TestHash(t *testing.T) {
	if Hash([]byte("ab")) == Hash([]byte("a"), []byte("b")) {
		t.Error("parts must not run together: ab and a+b hash alike")
	}
	if a, b := Hash([]byte("x")), Hash([]byte("x")); a != b || len(a) != 16 {
		t.Errorf("Hash is not a stable 16-character digest: %q, %q", a, b)
	}
	// Recorded hashes survive upgrades of slipway: a changed Hash would reapply every addon.
	// The value is sha256("cni manifests\x00"), cut to 16 hex digits.
	if got := Hash([]byte("cni manifests")); got != "0fda9be9f1f3934a" {
		t.Errorf("Hash changed: %s", got)
	}
}
