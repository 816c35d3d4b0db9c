package ssh_test

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slipway-dev/slipway/pkg/ssh"
	"github.com/slipway-dev/slipway/pkg/ssh/internal/sshd"
)

// TestTransfersStayOutOfVerbose: what Upload and Download carry never shows in the verbose
// output, with SFTP or the cat fallback. Files holding keys (the encryption configuration that
// apply copies from one control plane to another) travel this way and no other; the key here is
// registered as no secret, so only the transfer's own silence keeps it out.
func TestTransfersStayOutOfVerbose(t *testing.T) {
	const key = "aescbc-key-material-that-must-never-show-0123456789"
	for _, tt := range []struct {
		name string
		cfg  sshd.Config
	}{{"sftp", sshd.Config{}}, {"cat fallback", sshd.Config{NoSFTP: true}}} {
		t.Run(tt.name, func(t *testing.T) {
			var verbose bytes.Buffer
			e := newEnv(t, tt.cfg, ssh.Options{Verbose: &verbose})
			h := e.host("root")
			ctx := ctxFor(t, time.Minute)
			dst := filepath.Join(sshd.TempDir(t), "config.yaml")
			if err := h.Upload(ctx, strings.NewReader("secret: "+key+"\n"), dst, 0o600, ""); err != nil {
				t.Fatal(err)
			}
			var back bytes.Buffer
			if err := h.Download(ctx, dst, &back); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(back.String(), key) {
				t.Fatalf("downloaded %q", back.String())
			}
			// A command's output does show: the check below can see the key if it leaks.
			if err := h.Command(ctx, "echo", "visible").Run(); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(verbose.String(), key) || !strings.Contains(verbose.String(), "[node-1] visible") {
				t.Errorf("verbose output:\n%s", verbose.String())
			}
		})
	}
}
