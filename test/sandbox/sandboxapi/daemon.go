package sandboxapi

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// ensureDocker uses the running Docker daemon. On a fresh machine without one it installs
// docker.io from Debian and starts dockerd in the background, logging to the cache directory.
func ensureDocker(ctx context.Context, cache string, log io.Writer) error {
	if _, err := docker(ctx, "info", "--format", "{{.ServerVersion}}"); err == nil {
		return nil
	}
	if _, err := exec.LookPath("dockerd"); err != nil {
		fmt.Fprintln(log, "no Docker daemon: installing docker.io from Debian")
		for _, args := range [][]string{{"update"}, {"install", "-y", "--no-install-recommends", "docker.io"}} {
			cmd := exec.CommandContext(ctx, "apt-get", args...)
			cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
			if out, err := cmd.CombinedOutput(); err != nil {
				return fmt.Errorf("apt-get %v: %w: %s", args, err, tail(out))
			}
		}
	}
	if _, err := docker(ctx, "info", "--format", "{{.ServerVersion}}"); err == nil {
		return nil // the package's postinst started it
	}
	logPath := filepath.Join(cache, "dockerd.log")
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return err
	}
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer logFile.Close()
	cmd := exec.Command("dockerd")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// Its own session: dockerd must outlive this process and its terminal.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting dockerd: %w", err)
	}
	fmt.Fprintf(log, "started dockerd (pid %d, log %s)\n", cmd.Process.Pid, logPath)
	_ = cmd.Process.Release()
	return poll(ctx, 60*time.Second, "the Docker daemon to answer docker info", func() error {
		_, err := docker(ctx, "info", "--format", "{{.ServerVersion}}")
		return err
	})
}

// poll calls check until it succeeds or the timeout passes, and then says what it waited for
// and the last error.
func poll(ctx context.Context, timeout time.Duration, what string, check func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := check()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("waited %s for %s: %w", timeout, what, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w (last error: %v)", what, ctx.Err(), err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func tail(out []byte) string {
	if len(out) > 1500 {
		out = out[len(out)-1500:]
	}
	return string(out)
}
