package plan

import (
	"strings"
	"testing"
)

// encrypted is a converged HA cluster whose three control planes hold the same encryption
// configuration (holding) and whose API servers all read it.
func encrypted(pending string) Observed {
	o := converged(hostsHA(), "1.36.3", nil)
	o.Encryption = EncryptionState{
		Files:      map[string]string{"cp-1": "sha256:aa", "cp-2": "sha256:aa", "cp-3": "sha256:aa"},
		Configured: []string{"cp-1", "cp-2", "cp-3"},
		Source:     "cp-1", Holds: "aescbc key-1 (key-1 writes), identity", Pending: pending,
	}
	return o
}

func TestBuildEncryption(t *testing.T) {
	on := Desired{Version: "1.36.3", Hosts: hostsHA(), Encryption: true}
	rotate := on
	rotate.RotateEncryptionKey = true
	off := Desired{Version: "1.36.3", Hosts: hostsHA()}
	fresh := Observed{Hosts: bare(hostsHA())}
	oneMissing := encrypted("")
	delete(oneMissing.Encryption.Files, "cp-3")
	oneMissing.Encryption.Configured = []string{"cp-1", "cp-2"}
	rejoin := encrypted("")
	rejoin.Hosts[2].Joined = false
	delete(rejoin.Encryption.Files, "cp-3")
	tests := []struct {
		name    string
		desired Desired
		obs     Observed
		want    string // the encryption steps, in order
		wantErr string
	}{
		{"a new cluster gets it from kubeadm init and the joins", on, fresh, "", ""},
		{"enabling on a running cluster", on, converged(hostsHA(), "1.36.3", nil),
			"encryption-config; encryption-apiserver on cp-1; encryption-apiserver on cp-3; encryption-apiserver on cp-2; encrypt-secrets", ""},
		{"at rest: nothing to do", on, encrypted(""), "", ""},
		{"interrupted enabling or rotation is finished", on, encrypted("a key rotation is under way"), "encrypt-secrets", ""},
		{"a control plane that lost its file and its flag", on, oneMissing, "encryption-config; encryption-apiserver on cp-3", ""},
		{"a reinstalled control plane copies the file in its join", on, rejoin, "", ""},
		{"rotation", rotate, encrypted(""), "rotate-encryption-key", ""},
		{"rotation again after a kill finishes it", rotate, encrypted("a key rotation is under way"), "rotate-encryption-key", ""},
		{"rotation before encryption is in place", rotate, converged(hostsHA(), "1.36.3", nil), "", "no control plane holds an encryption configuration"},
		{"turning it off is refused", off, encrypted(""), "", "encryption.enabled: Invalid value: false"},
		{"rotation without encryption", Desired{Version: "1.36.3", Hosts: hostsHA(), RotateEncryptionKey: true}, converged(hostsHA(), "1.36.3", nil), "",
			"encryption.enabled: Required value: --rotate-encryption-key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Build(tt.desired, tt.obs)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, s := range p.Steps {
				if strings.HasPrefix(s.Name, "encrypt") || s.Name == StepRotateKey {
					got = append(got, s.String())
					if s.Reason == "" {
						t.Errorf("%s has no reason", s)
					}
				}
			}
			if g := strings.Join(got, "; "); g != tt.want {
				t.Errorf("steps\n  %s\nwant\n  %s", g, tt.want)
			}
		})
	}
}

// TestEncryptionAfterUpgrades: the API servers are reconfigured with the version they run, so
// an upgrade in the same run comes first.
func TestEncryptionAfterUpgrades(t *testing.T) {
	o := converged(hostsHA(), "1.35.4", nil)
	p, err := Build(Desired{Version: "1.36.3", Hosts: hostsHA(), Encryption: true}, o)
	if err != nil {
		t.Fatal(err)
	}
	s := names(p)
	if i, j := strings.LastIndex(s, "upgrade-node"), strings.Index(s, "encryption-config"); i < 0 || j < i {
		t.Errorf("encryption-config does not follow the upgrades: %s", s)
	}
}
