package images

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// versionVar is the variable slipway's version is linked into (pkg/version).
const versionVar = "github.com/slipway-dev/slipway/pkg/version.Version"

// GoBuild builds the machine-controller from the repository at root into out: static
// (CGO_ENABLED=0) for linux/amd64, stripped, -trimpath so that no path of this machine is in it,
// without a VCS stamp (which would differ between a checkout and a copy of it; the image's
// revision label carries the commit), and with version linked in as `make build` does. Every
// module it compiles must match the repository's go.sum: -mod=readonly whatever the caller's
// GOFLAGS say, so that a missing or different hash fails the build instead of being added.
func GoBuild(ctx context.Context, root, version, out string, log io.Writer) error {
	args := []string{"build", "-trimpath", "-buildvcs=false", "-ldflags", "-s -w -X " + versionVar + "=" + version,
		"-o", out, "./cmd/machine-controller"}
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64", "GOFLAGS=-mod=readonly", "GOWORK=off")
	if _, err := run(cmd, log); err != nil {
		return fmt.Errorf("building the machine-controller: %w", err)
	}
	return nil
}

// BuildCCM builds (or finds in the cache) the OpenStack cloud-controller-manager at CCMVersion
// with test/ccm/build.sh, the same binary the CCM tests run, and returns its path.
func BuildCCM(ctx context.Context, root string, log io.Writer) (string, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(root, "test/ccm/build.sh"), CCMVersion())
	cmd.Dir = root
	dir, err := run(cmd, log)
	if err != nil {
		return "", fmt.Errorf("building the OpenStack cloud-controller-manager %s: %w", CCMVersion(), err)
	}
	return filepath.Join(dir, "openstack-cloud-controller-manager"), nil
}

// GitVersion returns the version `make` links into slipway for the checkout at root and the
// commit it is at: git describe --tags --always --dirty, or "dev" outside a git checkout, as the
// Makefile's VERSION.
func GitVersion(ctx context.Context, root string) (version, revision string) {
	describe := exec.CommandContext(ctx, "git", "describe", "--tags", "--always", "--dirty")
	describe.Dir = root
	version, err := run(describe, io.Discard)
	if err != nil || version == "" {
		return "dev", ""
	}
	head := exec.CommandContext(ctx, "git", "rev-parse", "HEAD")
	head.Dir = root
	revision, _ = run(head, io.Discard)
	return version, revision
}

// run runs cmd and returns its trimmed stdout; its stderr goes to log and, in part, into the error.
func run(cmd *exec.Cmd, log io.Writer) (string, error) {
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = io.MultiWriter(log, &stderr)
	if err := cmd.Run(); err != nil {
		tail := stderr.String()
		if len(tail) > 2048 {
			tail = tail[len(tail)-2048:]
		}
		return "", fmt.Errorf("%s: %w: %s", strings.Join(cmd.Args, " "), err, strings.TrimSpace(tail))
	}
	return strings.TrimSpace(stdout.String()), nil
}
