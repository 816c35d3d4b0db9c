package encryption

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
)

func key(t *testing.T, n int) Key {
	t.Helper()
	k, err := NewKey(fmt.Sprintf("key-%d", n))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// secretTexts are the ways a key could show in a string: raw, base64 (as in the file) and hex.
func secretTexts(c Config) []string {
	var out []string
	for _, k := range c.Keys {
		out = append(out, string(k.Secret), base64.StdEncoding.EncodeToString(k.Secret), base64.RawStdEncoding.EncodeToString(k.Secret), strings.ToLower(strings.TrimSpace(string(hexOf(k.Secret)))))
	}
	return out
}

func hexOf(b []byte) []byte {
	const digits = "0123456789abcdef"
	out := make([]byte, 0, 2*len(b))
	for _, c := range b {
		out = append(out, digits[c>>4], digits[c&15])
	}
	return out
}

func TestRenderParse(t *testing.T) {
	k1, k2 := key(t, 1), key(t, 2)
	tests := []struct {
		name  string
		c     Config
		order string // the providers and keys in the file, in order
	}{
		{"fresh", Config{Keys: []Key{k1}, Rewritten: "key-1"}, "aescbc key-1 identity"},
		{"staged", Config{Keys: []Key{k1}, IdentityFirst: true}, "identity aescbc key-1"},
		{"rotation", Config{Keys: []Key{k1, k2}, Rewritten: "key-1"}, "aescbc key-1 key-2 identity"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, err := Render(tt.c)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(data, []byte("apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\n")) ||
				!bytes.Contains(data, []byte("  - resources:\n      - secrets\n")) {
				t.Errorf("not an EncryptionConfiguration for secrets:\n%s", data)
			}
			var order []string
			for _, line := range strings.Split(string(data), "\n") {
				line = strings.TrimSpace(line)
				switch {
				case line == "- aescbc:":
					order = append(order, "aescbc")
				case line == "- identity: {}":
					order = append(order, "identity")
				case strings.HasPrefix(line, "- name: "):
					order = append(order, strings.TrimPrefix(line, "- name: "))
				}
			}
			if got := strings.Join(order, " "); got != tt.order {
				t.Errorf("providers and keys %q, want %q:\n%s", got, tt.order, data)
			}
			back, err := Parse(data)
			if err != nil {
				t.Fatal(err)
			}
			again, _ := Render(back)
			if !bytes.Equal(again, data) {
				t.Errorf("parsed and rendered again, the file differs:\n%s\n---\n%s", data, again)
			}
			for _, s := range secretTexts(tt.c) {
				for _, shown := range []string{tt.c.Describe(), Reason(tt.c)} {
					if strings.Contains(shown, s) {
						t.Errorf("a key shows in %q", shown)
					}
				}
			}
		})
	}
}

func TestRenderRefuses(t *testing.T) {
	k1 := key(t, 1)
	short := Key{Name: "key-2", Secret: []byte("0123456789abcdef")}
	for name, c := range map[string]Config{
		"no key":       {},
		"short key":    {Keys: []Key{k1, short}},
		"foreign name": {Keys: []Key{{Name: "mine", Secret: k1.Secret}}},
		"twice":        {Keys: []Key{k1, k1}},
	} {
		if _, err := Render(c); err == nil {
			t.Errorf("%s: rendered", name)
		} else if strings.Contains(err.Error(), string(short.Secret)) || strings.Contains(err.Error(), base64.StdEncoding.EncodeToString(k1.Secret)) {
			t.Errorf("%s: the error shows a key: %v", name, err)
		}
	}
}

// TestParseErrorsHideTheFile: a broken or foreign file's content is never quoted.
func TestParseErrorsHideTheFile(t *testing.T) {
	const secret = "c2VjcmV0LXRoYXQtbXVzdC1ub3Qtc2hvdy0xMjM0NTY3OA=="
	for name, data := range map[string]string{
		"not yaml":       "secret: " + secret + "\n\t- [",
		"unknown field":  "apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources: []\nextra: " + secret + "\n",
		"bad base64":     "apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n- resources: [secrets]\n  providers:\n  - aescbc:\n      keys:\n      - name: key-1\n        secret: '" + secret + "!'\n  - identity: {}\n",
		"wrong length":   "apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n- resources: [secrets]\n  providers:\n  - aescbc:\n      keys:\n      - name: key-1\n        secret: " + secret + "\n  - identity: {}\n",
		"other provider": "apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n- resources: [secrets]\n  providers:\n  - secretbox:\n      keys:\n      - name: key-1\n        secret: " + secret + "\n  - identity: {}\n",
	} {
		_, err := Parse([]byte(data))
		if err == nil {
			t.Errorf("%s: parsed", name)
			continue
		}
		if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "c2VjcmV0") {
			t.Errorf("%s: the error quotes the file: %v", name, err)
		}
	}
}

func TestLoadedHash(t *testing.T) {
	metrics := `# HELP apiserver_encryption_config_controller_last_config_info [ALPHA] Information about the last applied encryption configuration with hash as label, split by apiserver identity.
# TYPE apiserver_encryption_config_controller_last_config_info gauge
apiserver_encryption_config_controller_last_config_info{apiserver_id_hash="sha256:3f2a",hash="sha256:0b1c"} 1
apiserver_encryption_config_controller_automatic_reloads_total{apiserver_id_hash="sha256:3f2a",status="success"} 2
`
	if h, ok := LoadedHash([]byte(metrics)); !ok || h != "sha256:0b1c" {
		t.Errorf("LoadedHash = %q, %v", h, ok)
	}
	if h, ok := LoadedHash([]byte("apiserver_request_total{code=\"200\"} 5\n")); ok {
		t.Errorf("LoadedHash of metrics without encryption = %q", h)
	}
	if got := Hash([]byte("x")); got != "sha256:2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881" {
		t.Errorf("Hash = %s", got)
	}
}
