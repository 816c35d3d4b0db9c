package sandboxapi

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
)

// spec is everything needed to create one container, and what its config label hashes.
type spec struct {
	name   string
	host   string
	run    []string // docker create flags before the image
	image  string
	cmd    []string        // after the image
	files  map[string]file // copied in before the first start
	volume string          // a labelled volume to create first, if any
}

type file struct {
	data []byte
	mode int64
}

func (s spec) hash() string {
	h := sha256.New()
	fmt.Fprintf(h, "%q %q %q %q %q\n", s.name, s.run, s.image, s.cmd, s.volume)
	for _, p := range sortedKeys(s.files) {
		fmt.Fprintf(h, "%s %o %x\n", p, s.files[p].mode, sha256.Sum256(s.files[p].data))
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// ensure makes the container exist, run, and match the spec: a running container with the same
// config hash is left alone, anything else is replaced. It reports whether it (re)created.
func (sb *Sandbox) ensure(ctx context.Context, s spec) (bool, error) {
	want := s.hash()
	out, err := docker(ctx, "ps", "-a", "--filter", "name=^"+s.name+"$", "--format",
		`{{.State}} {{.Label "`+labelConfig+`"}}`)
	if err != nil {
		return false, err
	}
	if f := strings.Fields(out); len(f) == 2 && f[0] == "running" && f[1] == want {
		return false, nil
	}
	if out != "" {
		if _, err := docker(ctx, "rm", "-f", s.name); err != nil {
			return false, err
		}
	}
	return true, sb.create(ctx, s, want)
}

func (sb *Sandbox) create(ctx context.Context, s spec, hash string) error {
	labels := []string{"--label", Label + "=" + sb.Name, "--label", labelHost + "=" + s.host, "--label", labelConfig + "=" + hash}
	if s.volume != "" {
		if _, err := docker(ctx, append([]string{"volume", "create"}, append(labels[:4:4], s.volume)...)...); err != nil {
			return err
		}
	}
	args := append([]string{"create", "--name", s.name, "--hostname", s.host}, labels...)
	args = append(append(append(args, s.run...), s.image), s.cmd...)
	if _, err := docker(ctx, args...); err != nil {
		return err
	}
	if len(s.files) > 0 {
		archive, err := tarOf(s.files)
		if err != nil {
			return err
		}
		if _, err := dockerIn(ctx, bytes.NewReader(archive), "cp", "-", s.name+":/"); err != nil {
			return fmt.Errorf("copying identity and configuration into %s: %w", s.name, err)
		}
	}
	_, err := docker(ctx, "start", s.name)
	return err
}

// tarOf archives files (paths without a leading slash; a trailing slash makes a directory),
// owned by root, for docker cp.
func tarOf(files map[string]file) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, p := range sortedKeys(files) {
		f := files[p]
		hdr := &tar.Header{Name: p, Mode: f.mode, Size: int64(len(f.data)), Typeflag: tar.TypeReg}
		if strings.HasSuffix(p, "/") {
			hdr.Typeflag, hdr.Size = tar.TypeDir, 0
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, err
		}
	}
	err := tw.Close()
	return buf.Bytes(), err
}

// canSetResources reports whether this machine's root holds CAP_SYS_RESOURCE. Where it does,
// hosts run --privileged; where it does not, --privileged fails and hosts get every other
// capability plus the runc wrapper (see node/entrypoint.sh).
func canSetResources() bool {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "CapBnd:"); ok {
			var caps uint64
			if _, err := fmt.Sscanf(strings.TrimSpace(v), "%x", &caps); err != nil {
				return false
			}
			const capSysResource = 24
			return caps&(1<<capSysResource) != 0
		}
	}
	return false
}
