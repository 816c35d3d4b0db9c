package ssh

import (
	"bytes"
	"strings"
	"sync"
	"testing"
)

func TestPrefixWriter(t *testing.T) {
	var out bytes.Buffer
	var mu sync.Mutex
	secrets := &Secrets{}
	secrets.Add("s3cret-token")
	w := newPrefixWriter(&out, &mu, "cp-1", secrets)
	for _, chunk := range []string{"hel", "lo\nwor", "ld\n\nno newline", " but s3cr", "et-token"} {
		w.Write([]byte(chunk))
	}
	w.Flush()
	want := "[cp-1] hello\n[cp-1] world\n[cp-1] \n[cp-1] no newline but [redacted]\n"
	if out.String() != want {
		t.Fatalf("got %q, want %q", out.String(), want)
	}
}

func TestTailBuffer(t *testing.T) {
	tb := &tailBuffer{max: 10}
	tb.Write([]byte("0123456789"))
	tb.Write([]byte("abc"))
	if tb.String() != "3456789abc" {
		t.Fatalf("got %q", tb.String())
	}
	// Once output was dropped, the first line is a fragment and goes.
	tb.Write([]byte("\nlast\n"))
	if tb.String() != "last\n" {
		t.Fatalf("got %q", tb.String())
	}
}

func TestSecretsRedact(t *testing.T) {
	var none *Secrets
	none.Add("ignored")
	if none.Redact("ignored") != "ignored" {
		t.Error("the nil Secrets hid something")
	}
	s := &Secrets{}
	s.Add("abcdef.0123456789abcdef", "0123456789", "xy", "")
	tests := map[string]string{
		"token abcdef.0123456789abcdef used":   "token [redacted] used",
		"key 0123456789 and 0123456789":        "key [redacted] and [redacted]",
		"short values are not secrets: xy xyz": "short values are not secrets: xy xyz",
	}
	for in, want := range tests {
		if got := s.Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPIDWriter(t *testing.T) {
	var out bytes.Buffer
	pw := &pidWriter{w: &out, ready: make(chan struct{})}
	for _, chunk := range []string{"12", "34\nfirst line\n", "rest"} {
		pw.Write([]byte(chunk))
	}
	<-pw.ready
	if pw.pid != 1234 || out.String() != "first line\nrest" {
		t.Fatalf("pid %d, output %q", pw.pid, out.String())
	}
}

func TestErrorMessages(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string
	}{
		{
			name: "exit error with a long stderr keeps the last lines",
			err: &ExitError{Host: "cp-1", Command: "kubeadm init", ExitStatus: 1,
				Stderr: strings.Repeat("noise\n", 20) + "[ERROR Port-6443]: Port 6443 is in use\n"},
			want: "running kubeadm init on cp-1: exit status 1" + strings.Repeat("\n  stderr: noise", 9) +
				"\n  stderr: [ERROR Port-6443]: Port 6443 is in use",
		},
		{
			name: "signal",
			err:  &ExitError{Host: "w-1", Command: "sleep 60", ExitStatus: -1, Signal: "KILL"},
			want: "running sleep 60 on w-1: killed by signal KILL",
		},
		{
			name: "connect error through a bastion",
			err:  &ConnectError{Host: "w-1", User: "ubuntu", Address: "10.0.0.5:22", Via: "jump", Err: errString("dial tcp: i/o timeout")},
			want: "connecting to w-1 as ubuntu (10.0.0.5:22) through bastion jump: dial tcp: i/o timeout",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.err.Error(); got != tt.want {
				t.Fatalf("got:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

type errString string

func (e errString) Error() string { return string(e) }
