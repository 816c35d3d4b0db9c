package e2e

import (
	"strings"
	"testing"
)

func TestRedactKeys(t *testing.T) {
	in := "10:21:13.368 users:\n" +
		"10:21:13.368     client-certificate-data: Q0VSVA==\n" +
		"10:21:13.368     client-key-data: S0VZ\n" +
		"10:21:13.368     token: abc.def\n" +
		"10:21:13.369 certificate valid until 2026-11-29T10:31:13Z\n"
	got := redactKeys(in)
	for _, secret := range []string{"S0VZ", "abc.def"} {
		if strings.Contains(got, secret) {
			t.Errorf("redactKeys left %q in:\n%s", secret, got)
		}
	}
	for _, kept := range []string{"client-certificate-data: Q0VSVA==", "client-key-data: <redacted>", "token: <redacted>", "valid until 2026-11-29T10:31:13Z"} {
		if !strings.Contains(got, kept) {
			t.Errorf("redactKeys output lacks %q:\n%s", kept, got)
		}
	}
}
