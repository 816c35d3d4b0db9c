package cluster

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
)

func TestHolderGone(t *testing.T) {
	host, _ := os.Hostname()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		holder string
		gone   bool
	}{
		{fmt.Sprintf("ops@%s pid %d since x", host, dead.Process.Pid), true},
		{fmt.Sprintf("ops@%s pid %d since x", host, os.Getppid()), false},
		{fmt.Sprintf("ops@other-machine pid %d since x", dead.Process.Pid), false},
		{"garbage", false},
	}
	for _, tt := range tests {
		if got := holderGone(tt.holder); got != tt.gone {
			t.Errorf("holderGone(%q) = %v, want %v", tt.holder, got, tt.gone)
		}
	}
}
