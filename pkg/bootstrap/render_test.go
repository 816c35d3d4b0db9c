package bootstrap

import "testing"

func TestNewTokenSecret(t *testing.T) {
	a, err := NewTokenSecret()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := NewTokenSecret()
	if !tokenRe.MatchString("abcdef."+a) || a == b {
		t.Fatalf("NewTokenSecret() = %q, %q: want two different [a-z0-9]{16}", a, b)
	}
}
