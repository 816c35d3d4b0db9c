package gosum

import "testing"

func TestFlipHash(t *testing.T) {
	const line = "example.com/m v1.0.0 h1:abcdA="
	if got := FlipHash(line, "example.com/m v1.0.0 h1:"); got != "example.com/m v1.0.0 h1:abcdB=\n" {
		t.Errorf("FlipHash = %q", got)
	}
	if got := FlipHash("example.com/m v1.0.0 h1:abcdx=", "example.com/m v1.0.0 h1:"); got != "example.com/m v1.0.0 h1:abcdA=\n" {
		t.Errorf("FlipHash = %q", got)
	}
	if got := FlipHash(line, "example.com/other"); got != line+"\n" {
		t.Errorf("a line of another module changed: %q", got)
	}
}
