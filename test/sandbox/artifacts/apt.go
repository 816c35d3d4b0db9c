package artifacts

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// aptFormat changes whenever the repository layout or the packages' contents change.
const aptFormat = "apt-v1"

// aptRepo builds the minor's repository, laid out like pkgs.k8s.io/core:/stable:/<minor>/deb/:
// a flat repository ("deb [signed-by=…] <url> /") with Packages, Packages.gz, a Release signed
// both inline (InRelease) and detached (Release.gpg), the public key as Release.key, and the
// packages under amd64/. One repository holds one Kubernetes version.
func (b *builder) aptRepo(ctx context.Context, r *Release) error {
	crictl, err := b.tool(ctx, "crictl", r.CriTools)
	if err != nil {
		return err
	}
	signer, err := b.aptSigner(ctx)
	if err != nil {
		return err
	}
	debs := releaseDebs(r, crictl)
	inputs := []string{aptFormat, r.Version, signer.fingerprint}
	for _, d := range debs {
		for _, f := range d.files {
			inputs = append(inputs, f.name, f.src, string(f.data))
		}
	}
	key, err := keyOf(inputs...)
	if err != nil {
		return err
	}
	r.AptRepo = b.path("apt", r.Minor+"-"+key)
	return b.once(r.AptRepo, func(tmp string) error {
		pool := filepath.Join(tmp, "amd64")
		if err := os.MkdirAll(pool, 0o755); err != nil {
			return err
		}
		var packages strings.Builder
		for _, d := range debs {
			name, control, err := d.build(ctx, pool)
			if err != nil {
				return err
			}
			stanza, err := packageStanza(control, filepath.Join(pool, name), "amd64/"+name)
			if err != nil {
				return err
			}
			packages.WriteString(stanza + "\n")
		}
		return writeIndexes(ctx, tmp, []byte(packages.String()), signer)
	})
}

// packageStanza appends the fields apt needs to find and verify a package to its control text.
func packageStanza(control, path, filename string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	s256 := sha256.Sum256(data)
	m5 := md5.Sum(data)
	return fmt.Sprintf("%sFilename: %s\nSize: %d\nMD5sum: %s\nSHA256: %s\n",
		control, filename, len(data), hex.EncodeToString(m5[:]), hex.EncodeToString(s256[:])), nil
}

// writeIndexes writes Packages, Packages.gz, Release, InRelease, Release.gpg and Release.key.
func writeIndexes(ctx context.Context, dir string, packages []byte, s *signer) error {
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	if _, err := zw.Write(packages); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	files := map[string][]byte{"Packages": packages, "Packages.gz": gz.Bytes()}
	var md5s, sha256s strings.Builder
	for _, name := range []string{"Packages", "Packages.gz"} {
		m5 := md5.Sum(files[name])
		s256 := sha256.Sum256(files[name])
		fmt.Fprintf(&md5s, " %x %d %s\n", m5, len(files[name]), name)
		fmt.Fprintf(&sha256s, " %x %d %s\n", s256, len(files[name]), name)
	}
	release := fmt.Sprintf("Origin: slipway-sandbox\nLabel: slipway-sandbox\nArchitectures: amd64\nDate: %s\nDescription: Kubernetes packages built from source for the Slipway sandbox\nMD5Sum:\n%sSHA256:\n%s",
		time.Now().UTC().Format(time.RFC1123Z), md5s.String(), sha256s.String())
	files["Release"] = []byte(release)
	files["Release.key"] = s.publicKey
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	release = filepath.Join(dir, "Release")
	if err := s.gpg(ctx, "--clearsign", "--output", filepath.Join(dir, "InRelease"), release); err != nil {
		return err
	}
	return s.gpg(ctx, "--detach-sign", "--armor", "--output", filepath.Join(dir, "Release.gpg"), release)
}

// signer signs repositories with one key kept in the cache, so that a host configured once keeps
// trusting every repository the sandbox builds.
type signer struct {
	home        string
	fingerprint string
	publicKey   []byte
}

func (s *signer) gpg(ctx context.Context, args ...string) error {
	_, err := gpg(ctx, s.home, append([]string{"--local-user", s.fingerprint, "--yes"}, args...)...)
	return err
}

func (b *builder) aptSigner(ctx context.Context) (*signer, error) {
	home := b.path("apt", "gnupg")
	if err := os.MkdirAll(home, 0o700); err != nil {
		return nil, err
	}
	// Two sandboxes starting at once must not each generate a key.
	unlock, err := lockFile(filepath.Join(home, ".lock"))
	if err != nil {
		return nil, err
	}
	defer unlock()
	const uid = "Slipway sandbox apt repository <sandbox@slipway.invalid>"
	list := func() (string, error) {
		out, err := gpg(ctx, home, "--with-colons", "--list-secret-keys", uid)
		if err != nil {
			return "", err
		}
		for _, line := range strings.Split(out, "\n") {
			if f := strings.Split(line, ":"); len(f) > 9 && f[0] == "fpr" {
				return f[9], nil
			}
		}
		return "", fmt.Errorf("no fingerprint in gpg output %q", out)
	}
	fpr, err := list()
	if err != nil {
		if _, err := gpg(ctx, home, "--passphrase", "", "--quick-generate-key", uid, "ed25519", "sign", "never"); err != nil {
			return nil, err
		}
		if fpr, err = list(); err != nil {
			return nil, err
		}
	}
	pub, err := gpg(ctx, home, "--armor", "--export", fpr)
	if err != nil {
		return nil, err
	}
	return &signer{home: home, fingerprint: fpr, publicKey: []byte(pub + "\n")}, nil
}

// gpg runs gpg non-interactively against the sandbox's own keyring, never the user's.
func gpg(ctx context.Context, home string, args ...string) (string, error) {
	args = append([]string{"--homedir", home, "--batch", "--pinentry-mode", "loopback"}, args...)
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "gpg", args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("gpg %s: %w: %s", strings.Join(args[5:], " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}
