package sandboxapi

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"strings"
)

// Label marks every Docker object of a sandbox; its value is the sandbox name.
const Label = "dev.slipway.sandbox"

// labelHost names the host a container or volume belongs to; labelConfig is a hash of the
// container's settings, so that a repeated up keeps containers whose settings did not change.
const (
	labelHost   = Label + ".host"
	labelConfig = Label + ".config"
)

// docker runs the docker CLI and returns its trimmed stdout. Errors carry the command and the
// tail of stderr, because "exit status 1" alone helps nobody.
func docker(ctx context.Context, args ...string) (string, error) {
	return dockerIn(ctx, nil, args...)
}

func dockerIn(ctx context.Context, stdin io.Reader, args ...string) (string, error) {
	return Run(ctx, stdin, "docker", args...)
}

// Run runs a command and returns its trimmed stdout. Errors carry the command and the tail of
// its stderr.
func Run(ctx context.Context, stdin io.Reader, name string, args ...string) (string, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdin = stdin
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if len(msg) > 1500 {
			msg = "…" + msg[len(msg)-1500:]
		}
		return "", fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, msg)
	}
	return strings.TrimSpace(stdout.String()), nil
}

// lines splits command output into non-empty lines.
func lines(out string) []string {
	var l []string
	for _, s := range strings.Split(out, "\n") {
		if s = strings.TrimSpace(s); s != "" {
			l = append(l, s)
		}
	}
	return l
}

// labelled lists objects of a kind ("container", "volume", "network") carrying label=value, or
// the bare label when value is empty; containers include stopped ones.
func labelled(ctx context.Context, kind, value string) ([]string, error) {
	filter := Label
	if value != "" {
		filter += "=" + value
	}
	args := []string{kind, "ls", "-q", "--filter", "label=" + filter}
	switch kind {
	case "container":
		args = []string{"ps", "-a", "-q", "--filter", "label=" + filter}
	case "network":
		args = []string{"network", "ls", "-q", "--filter", "label=" + filter}
	}
	out, err := docker(ctx, args...)
	if err != nil {
		return nil, err
	}
	return lines(out), nil
}
