package bounded

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
)

func TestReadAll(t *testing.T) {
	tests := []struct {
		in      string
		max     int64
		wantErr bool
	}{
		{"", 0, false}, {"abc", 3, false}, {"abcd", 3, true}, {"", 3, false},
	}
	for _, tt := range tests {
		got, err := ReadAll(strings.NewReader(tt.in), tt.max, "input")
		if tt.wantErr {
			var te *TooLargeError
			if !errors.As(err, &te) || te.Max != tt.max || err.Error() != "input is larger than 3 bytes, the most slipway reads from it" {
				t.Errorf("ReadAll(%q, %d) = %v, want a TooLargeError", tt.in, tt.max, err)
			}
			continue
		}
		if err != nil || string(got) != tt.in {
			t.Errorf("ReadAll(%q, %d) = %q, %v", tt.in, tt.max, got, err)
		}
	}
}

func TestReadFile(t *testing.T) {
	if _, err := ReadFile("/dev/zero", 1<<10); err == nil || err.Error() != "/dev/zero is larger than 1 KiB, the most slipway reads from it" {
		t.Errorf("ReadFile(/dev/zero) = %v", err)
	}
	missing := filepath.Join(t.TempDir(), "missing")
	if _, err := ReadFile(missing, 1); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ReadFile(missing) = %v", err)
	}
	if _, err := ReadFile(t.TempDir(), 1); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("ReadFile(dir) = %v", err)
	}
}

func TestWriter(t *testing.T) {
	stopped := 0
	w := &Writer{What: "output", Max: 4, OnOverflow: func() { stopped++ }}
	if n, err := w.Write([]byte("abc")); n != 3 || err != nil {
		t.Fatalf("Write = %d, %v", n, err)
	}
	if _, err := w.Write([]byte("de")); !IsTooLarge(err) {
		t.Fatalf("Write past the limit = %v", err)
	}
	if _, err := w.Write([]byte("f")); !IsTooLarge(err) || stopped != 1 || !IsTooLarge(w.Err()) {
		t.Fatalf("after the limit: err %v, OnOverflow called %d times", err, stopped)
	}
}

func TestSize(t *testing.T) {
	for n, want := range map[int64]string{1 << 20: "1 MiB", 8 << 20: "8 MiB", 256 << 10: "256 KiB", 1000: "1000 bytes", 1025: "1025 bytes"} {
		if got := Size(n); got != want {
			t.Errorf("Size(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestReader(t *testing.T) {
	for _, tt := range []struct {
		in      string
		max     int64
		wantErr bool
	}{{"", 0, false}, {"abc", 3, false}, {"abcd", 3, true}, {"ab", 3, false}, {"a", 0, true}} {
		got, err := io.ReadAll(&Reader{R: iotest.OneByteReader(strings.NewReader(tt.in)), Max: tt.max, What: "the stream"})
		if tt.wantErr {
			if !IsTooLarge(err) || !strings.HasPrefix(err.Error(), "the stream is larger than") {
				t.Errorf("%q with a limit of %d: %q, %v; want a TooLargeError", tt.in, tt.max, got, err)
			}
			continue
		}
		if err != nil || string(got) != tt.in {
			t.Errorf("%q with a limit of %d: %q, %v", tt.in, tt.max, got, err)
		}
	}
}
