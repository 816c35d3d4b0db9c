package ssh

import (
	"context"
	"io"
	"os/exec"
	"strings"
	"testing"
)

func TestQuote(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", "''"},
		{"kubeadm", "kubeadm"},
		{"/etc/kubernetes/admin.conf", "/etc/kubernetes/admin.conf"},
		{"--config=/x.yaml", "--config=/x.yaml"},
		{"a b", "'a b'"},
		{"it's", `'it'\''s'`},
		{"$(reboot)", "'$(reboot)'"},
		{"`x`;y|z&", "'`x`;y|z&'"},
		{"*", "'*'"},
		{"~root", "'~root'"},
		{"line\nbreak", "'line\nbreak'"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got := Quote(tt.in)
			if got != tt.want {
				t.Fatalf("Quote(%q) = %s, want %s", tt.in, got, tt.want)
			}
			// The real test: a shell gives back the original word.
			out, err := exec.Command("sh", "-c", "printf %s "+got).Output()
			if err != nil || string(out) != tt.in {
				t.Fatalf("sh read %s as %q (%v), want %q", got, out, err, tt.in)
			}
		})
	}
}

func TestRemoteCommand(t *testing.T) {
	bg := context.Background()
	tests := []struct {
		name      string
		cmd       *Cmd
		env       []string
		sudo      bool
		wantLine  string
		wantStdin string
	}{
		{name: "plain", cmd: NewCommand(bg, "h", nil, "kubeadm", "init", "--config", "/tmp/a b.yaml"),
			wantLine: "kubeadm init --config '/tmp/a b.yaml'"},
		{name: "sudo and env", cmd: NewCommand(bg, "h", nil, "kubeadm", "join"), env: []string{"TOKEN=a'b", "X="}, sudo: true,
			wantLine: `sudo -n -- env TOKEN='a'\''b' X='' kubeadm join`},
		{name: "script", cmd: NewScript(bg, "h", nil, "install", "echo $A\n"), env: []string{"A=1 2"},
			wantLine: "bash -s", wantStdin: "export A='1 2'\necho $A\n"},
		{name: "script with sudo", cmd: NewScript(bg, "h", nil, "install", "true\n"), sudo: true,
			wantLine: "sudo -n -- bash -s", wantStdin: "true\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cmd.Env = tt.env
			line, stdin := remoteCommand(tt.cmd, tt.sudo)
			if line != tt.wantLine {
				t.Errorf("line = %s, want %s", line, tt.wantLine)
			}
			var got []byte
			if stdin != nil {
				got, _ = io.ReadAll(stdin)
			}
			if string(got) != tt.wantStdin {
				t.Errorf("stdin = %q, want %q", got, tt.wantStdin)
			}
		})
	}
}

func TestSplitEnv(t *testing.T) {
	tests := []struct {
		env     []string
		wantErr string
	}{
		{env: []string{"A=1", "_B2=x=y", "EMPTY="}},
		{env: []string{"1A=x"}, wantErr: `name "1A" is invalid`},
		{env: []string{"A-B=x"}, wantErr: `name "A-B" is invalid`},
		{env: []string{"$(x)=1"}, wantErr: `name "$(x)" is invalid`},
		{env: []string{"NOVALUE"}, wantErr: `"NOVALUE" is not KEY=value`},
		{env: []string{"A=\x00"}, wantErr: "NUL byte"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.env, ","), func(t *testing.T) {
			_, _, err := splitEnv(tt.env)
			if (err == nil) != (tt.wantErr == "") || err != nil && !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
		})
	}
}
