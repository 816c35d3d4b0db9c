package cluster

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

func TestHolderGone(t *testing.T) {
	me := localIdentity()
	if me == "" {
		t.Fatal("no local identity: /proc is not readable")
	}
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	parent, err := processIdentity(os.Getppid())
	if err != nil {
		t.Fatal(err)
	}
	boot, ns := fieldOf(me, "boot"), fieldOf(me, "pidns")
	tests := []struct {
		name  string
		local string
		gone  bool
	}{
		{"a process that exited", fmt.Sprintf("boot=%s pidns=%s pid=%d start=1", boot, ns, dead.Process.Pid), true},
		{"a live process", parent, false},
		{"a reused PID: another start time", strings.Replace(parent, "start=", "start=9", 1), true},
		{"this process", me, false},
		{"another PID namespace (a container with the same hostname)", fmt.Sprintf("boot=%s pidns=pid:[1] pid=%d start=1", boot, dead.Process.Pid), false},
		{"another machine (or boot)", fmt.Sprintf("boot=other pidns=%s pid=%d start=1", ns, dead.Process.Pid), false},
		{"no identity", "", false},
		{"garbage", "boot= pid=x", false},
	}
	for _, tt := range tests {
		if got := holderGone(tt.local); got != tt.gone {
			t.Errorf("%s: holderGone(%q) = %v, want %v", tt.name, tt.local, got, tt.gone)
		}
	}
}

func fieldOf(identity, key string) string {
	for _, f := range strings.Fields(identity) {
		if v, ok := strings.CutPrefix(f, key+"="); ok {
			return v
		}
	}
	return ""
}
