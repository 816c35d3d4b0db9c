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

func TestHostRecord(t *testing.T) {
	script := []byte("registry password: hunter2")
	a, err := HostRecord("", script)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := HostRecord("", script)
	if a == b {
		t.Error("two hosts got the same record for the same script: the salt is not random")
	}
	salt := HostRecordSalt(a)
	if salt == "" || len(a) != 32+1+64 {
		t.Fatalf("record %q: salt %q", a, salt)
	}
	if again, _ := HostRecord(salt, script); again != a {
		t.Errorf("the host's own salt gave %q, want its record %q back", again, a)
	}
	if changed, _ := HostRecord(salt, []byte("registry password: hunter3")); changed == a {
		t.Error("a changed script gave the same record")
	}
	// An older slipway's unsalted record, garbage and nothing have no salt: a new one is made.
	for _, old := range []string{"0fda9be9f1f3934a", "", "x:y", "zz" + a[2:]} {
		if s := HostRecordSalt(old); s != "" {
			t.Errorf("HostRecordSalt(%q) = %q, want none", old, s)
		}
	}
}
