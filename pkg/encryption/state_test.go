package encryption

import (
	"strings"
	"testing"
)

func names(c Config) string {
	var n []string
	for _, k := range c.Keys {
		n = append(n, k.Name)
	}
	s := strings.Join(n, ",")
	if c.IdentityFirst {
		s = "identity," + s
	}
	return s + " rewritten=" + c.Rewritten
}

// TestNextWalksToDone follows enabling on a running cluster and a rotation from each state the
// file can be left in, as a killed run leaves it, to the end.
func TestNextWalksToDone(t *testing.T) {
	k1, k2, k3 := key(t, 1), key(t, 2), key(t, 3)
	tests := []struct {
		name  string
		c     Config
		steps []string // action, then the configuration it leaves
	}{
		{"enabling: staged", Config{Keys: []Key{k1}, IdentityFirst: true},
			[]string{"promote key-1 rewritten=", "rewrite key-1 rewritten=key-1"}},
		{"enabling: promoted, rewrite interrupted", Config{Keys: []Key{k1}},
			[]string{"rewrite key-1 rewritten=key-1"}},
		{"rotation: new key second", Config{Keys: []Key{k1, k2}, Rewritten: "key-1"},
			[]string{"promote key-2,key-1 rewritten=key-1", "rewrite key-2 rewritten=key-2"}},
		{"rotation: new key first", Config{Keys: []Key{k2, k1}, Rewritten: "key-1"},
			[]string{"rewrite key-2 rewritten=key-2"}},
		{"rotation of a rotated cluster", Config{Keys: []Key{k2, k3}, Rewritten: "key-2"},
			[]string{"promote key-3,key-2 rewritten=key-2", "rewrite key-3 rewritten=key-3"}},
		{"done", Config{Keys: []Key{k3}, Rewritten: "key-3"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.c
			var got []string
			for i := 0; i < 5; i++ {
				a, next := Next(c)
				if a == Done {
					if names(next) != names(c) {
						t.Errorf("done changed the configuration")
					}
					if Reason(c) != "" {
						t.Errorf("a done configuration has a reason: %s", Reason(c))
					}
					break
				}
				if Reason(c) == "" {
					t.Errorf("%s has no reason", names(c))
				}
				got = append(got, a.String()+" "+names(next))
				c = next
			}
			if strings.Join(got, "; ") != strings.Join(tt.steps, "; ") {
				t.Errorf("steps\n  %s\nwant\n  %s", strings.Join(got, "; "), strings.Join(tt.steps, "; "))
			}
		})
	}
}

func TestStartRotation(t *testing.T) {
	k1, k2, k3 := key(t, 1), key(t, 2), key(t, 3)
	done := Config{Keys: []Key{k2}, Rewritten: "key-2"}
	if done.NextKeyName() != "key-3" {
		t.Errorf("the key after key-2 is %s", done.NextKeyName())
	}
	c, err := StartRotation(done, k3)
	if err != nil {
		t.Fatal(err)
	}
	if got := names(c); got != "key-2,key-3 rewritten=key-2" {
		t.Errorf("rotation starts with %s", got)
	}
	if _, err := StartRotation(done, k1); err == nil {
		t.Error("a rotation started with a key named after an old one")
	}
	if _, err := StartRotation(Config{Keys: []Key{k1, k2}, Rewritten: "key-1"}, k3); err == nil {
		t.Error("a rotation started on top of one under way")
	}
	if a, _ := Next(Fresh(k1)); a != Done {
		t.Errorf("a fresh configuration needs %s", a)
	}
	if a, _ := Next(Staged(k1)); a != Promote {
		t.Errorf("a staged configuration needs %s", a)
	}
}
