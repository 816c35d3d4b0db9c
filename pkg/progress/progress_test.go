package progress

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	tests := []struct {
		line string
		want Entry
	}{
		{"Probing 3 hosts...", Entry{Level: Info, Message: "Probing 3 hosts..."}},
		{"[cp-1] $ kubeadm init", Entry{Level: Info, Host: "cp-1", Message: "$ kubeadm init"}},
		{"         [10.0.0.1] applied 3 objects", Entry{Level: Info, Host: "10.0.0.1", Message: "applied 3 objects"}},
		{"Warning: certificate apiserver expires in 3 days", Entry{Level: Warning, Message: "certificate apiserver expires in 3 days"}},
		{"Error: step x failed", Entry{Level: Error, Message: "step x failed"}},
		{"[not a host] text", Entry{Level: Info, Message: "[not a host] text"}},
		{"[] text", Entry{Level: Info, Message: "[] text"}},
		{"[1/5] a -> b: copied", Entry{Level: Info, Message: "[1/5] a -> b: copied"}},
		{"[fd00::1] ok", Entry{Level: Info, Host: "fd00::1", Message: "ok"}},
	}
	for _, tt := range tests {
		if got := Parse(tt.line); got != tt.want {
			t.Errorf("Parse(%q) = %+v, want %+v", tt.line, got, tt.want)
		}
	}
}

// TestWriter: text passes through unchanged; in JSON every line and every entry is one JSON
// object a line with the time in UTC, control characters escaped, blank lines dropped.
func TestWriter(t *testing.T) {
	var b bytes.Buffer
	w := NewWriter(&b)
	_, _ = w.Write([]byte("Probing 1 host...\n"))
	Log(w, Entry{Host: "cp-1", Step: "install", Message: "started"}, "[  1s] [cp-1] install started\n")
	if b.String() != "Probing 1 host...\n[  1s] [cp-1] install started\n" {
		t.Fatalf("text mode changed the lines:\n%s", b.String())
	}
	b.Reset()
	at := time.Date(2026, 12, 2, 3, 4, 5, 0, time.FixedZone("CET", 3600))
	w.now = func() time.Time { return at }
	w.SetJSON()
	_, _ = w.Write([]byte("[cp-1] line one\n\n  [cp-2] line \x1b[2Jtwo\nWarning: three"))
	Log(w, Entry{Host: "cp-1", Step: "install", Message: "started"}, "ignored\n")
	Log(w, Entry{Level: Error, Step: "install", Message: "failed after 2s"}, "ignored\n")
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	want := []Entry{
		{Level: Info, Host: "cp-1", Message: "line one"},
		{Level: Info, Host: "cp-2", Message: "line \x1b[2Jtwo"},
		{Level: Warning, Message: "three"},
		{Level: Info, Host: "cp-1", Step: "install", Message: "started"},
		{Level: Error, Step: "install", Message: "failed after 2s"},
	}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), b.String())
	}
	for i, line := range lines {
		if strings.ContainsRune(line, 0x1b) {
			t.Errorf("line %d carries a raw control character: %q", i, line)
		}
		var got Entry
		if err := json.Unmarshal([]byte(line), &got); err != nil {
			t.Fatalf("line %d is not JSON: %v: %s", i, err, line)
		}
		if !got.Time.Equal(at) || got.Time.Location() != time.UTC {
			t.Errorf("line %d: time %v, want %v in UTC", i, got.Time, at)
		}
		got.Time = time.Time{}
		if got != want[i] {
			t.Errorf("line %d = %+v, want %+v", i, got, want[i])
		}
	}
	if !strings.Contains(lines[0], `"time":"2026-12-02T02:04:05Z"`) {
		t.Errorf("the time is not RFC 3339 in UTC: %s", lines[0])
	}
}
