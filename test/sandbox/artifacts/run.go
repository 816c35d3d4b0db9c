package artifacts

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
)

// run executes a build script or tool and returns its trimmed stdout. Its stderr goes to the log
// as it happens (cold builds take minutes) and its tail into the error.
func (b *builder) run(ctx context.Context, env []string, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = b.opts.Root
	cmd.Env = append(append(os.Environ(), "SLIPWAY_CACHE="+b.opts.Cache), env...)
	var stdout bytes.Buffer
	tail := &tailWriter{max: 2048}
	cmd.Stdout = &stdout
	cmd.Stderr = io.MultiWriter(b.opts.Log, tail)
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("running %s %s: %w: %s", name, strings.Join(args, " "), err, tail.String())
	}
	return strings.TrimSpace(stdout.String()), nil
}

// tailWriter keeps the last max bytes written to it.
type tailWriter struct {
	max int
	buf []byte
}

func (t *tailWriter) Write(p []byte) (int, error) {
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = t.buf[len(t.buf)-t.max:]
	}
	return len(p), nil
}

func (t *tailWriter) String() string { return strings.TrimSpace(string(t.buf)) }
