package ssh

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"

	"github.com/pkg/sftp"

	"github.com/slipway-dev/slipway/pkg/internal/bounded"
)

// Upload streams src to dst on the host. The data goes to a temporary
// file next to dst, which gets mode and owner and is then renamed over
// dst, so readers never see a partial file. SFTP is used when offered
// (through sudo, sftp-server runs as root); otherwise the data streams
// into `cat`. Nothing is buffered whole in memory. The parent directory
// must exist.
func (c *Conn) Upload(ctx context.Context, src io.Reader, dst string, mode fs.FileMode, owner string) error {
	if err := c.upload(ctx, src, dst, mode, owner); err != nil {
		return fmt.Errorf("uploading %s to %s: %w", dst, c.Name(), err)
	}
	return nil
}

func (c *Conn) upload(ctx context.Context, src io.Reader, dst string, mode fs.FileMode, owner string) error {
	if err := errors.Join(validatePath(dst), validateOwner(owner)); err != nil {
		return err
	}
	if mode == 0 {
		mode = 0o644
	}
	sudo, err := c.useSudo(ctx)
	if err != nil {
		return err
	}
	tmp := path.Join(path.Dir(dst), "."+path.Base(dst)+".slipway-"+randomSuffix())
	sc, _, err := c.sftpClient(ctx, sudo)
	if errors.Is(err, errNoSFTP) {
		return c.uploadCat(ctx, src, tmp, dst, mode, owner, sudo)
	}
	if err != nil {
		return err
	}
	if err := c.uploadSFTP(ctx, sc, src, tmp, mode, owner, sudo); err != nil {
		_ = sc.Remove(tmp)
		return err
	}
	if err := sc.PosixRename(tmp, dst); err != nil {
		_ = sc.Remove(tmp)
		return fmt.Errorf("renaming %s to %s: %w", tmp, dst, err)
	}
	return nil
}

func (c *Conn) uploadSFTP(ctx context.Context, sc *sftp.Client, src io.Reader, tmp string, mode fs.FileMode, owner string, sudo bool) error {
	f, err := sc.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL)
	if err != nil {
		return fmt.Errorf("creating %s: %w", tmp, err)
	}
	// The file is created with the server's umask; close it to others
	// before any data arrives, the final mode is set once it is complete.
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return fmt.Errorf("setting the mode of %s: %w", tmp, err)
	}
	stop := context.AfterFunc(ctx, func() { f.Close() })
	_, err = f.ReadFromWithConcurrency(src, 64)
	if !stop() && ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", tmp, err)
	}
	if err := errors.Join(f.Chmod(mode), f.Close()); err != nil {
		return fmt.Errorf("setting the mode of %s: %w", tmp, err)
	}
	if owner == "" {
		return nil
	}
	// SFTP only takes numeric ids; chown resolves names on the host.
	return c.shell(ctx, "chown "+owner, "chown "+Quote(owner)+" "+Quote(tmp), sudo, nil, nil)
}

// uploadCat streams into `cat` in one command and finishes in a second
// one. Two steps, because when src fails midway the session still sends
// EOF, and cat would then exit 0 with a truncated file: the rename runs
// only after the client saw the whole stream go out, and checks its size.
func (c *Conn) uploadCat(ctx context.Context, src io.Reader, tmp, dst string, mode fs.FileMode, owner string, sudo bool) error {
	q := Quote(tmp)
	cr := &countingReader{r: src}
	err := c.shell(ctx, "cat > "+Quote(dst), "umask 077 && set -C && cat > "+q, sudo, cr, nil)
	if err == nil {
		err = cr.err
	}
	if err != nil {
		_ = c.shell(context.WithoutCancel(ctx), "rm", "rm -f "+q, sudo, nil, nil)
		return err
	}
	script := fmt.Sprintf(`[ "$(wc -c < %s)" -eq %d ] && chmod %04o %s`, q, cr.n, mode.Perm(), q)
	if owner != "" {
		script += " && chown " + Quote(owner) + " " + q
	}
	script += fmt.Sprintf(" && mv -f %s %s || { rm -f %s; exit 1; }", q, Quote(dst), q)
	return c.shell(ctx, "install "+Quote(dst), script, sudo, nil, nil)
}

// countingReader counts bytes and remembers a read error, which the SSH
// session would otherwise turn into a plain EOF for the remote side.
type countingReader struct {
	r   io.Reader
	n   int64
	err error
}

func (r *countingReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	r.n += int64(n)
	if err != nil && err != io.EOF {
		r.err = err
	}
	return n, err
}

// Download streams the file src on the host to dst.
func (c *Conn) Download(ctx context.Context, src string, dst io.Writer) error {
	if err := c.download(ctx, src, dst); err != nil {
		return fmt.Errorf("downloading %s from %s: %w", src, c.Name(), err)
	}
	return nil
}

// ReadFile downloads the file src from h into memory, at most max bytes of it: a file on a
// host is input from outside, and a larger one (or an endless one such as a device) fails
// with a *bounded.TooLargeError naming the file and the host, its transfer stopped as a
// cancelled one is.
func ReadFile(ctx context.Context, h Host, src string, max int64) ([]byte, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	out := &bounded.Writer{What: fmt.Sprintf("%s on %s", src, h.Name()), Max: max, OnOverflow: cancel}
	err := h.Download(ctx, src, out)
	if tooLarge := out.Err(); tooLarge != nil {
		return nil, tooLarge
	}
	if err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

func (c *Conn) download(ctx context.Context, src string, dst io.Writer) error {
	if err := validatePath(src); err != nil {
		return err
	}
	sudo, err := c.useSudo(ctx)
	if err != nil {
		return err
	}
	sc, _, err := c.sftpClient(ctx, sudo)
	if errors.Is(err, errNoSFTP) {
		return c.shell(ctx, "cat "+Quote(src), "cat -- "+Quote(src), sudo, nil, dst)
	}
	if err != nil {
		return err
	}
	f, err := sc.Open(src)
	if err != nil {
		return err
	}
	defer f.Close()
	stop := context.AfterFunc(ctx, func() { f.Close() })
	defer stop()
	if _, err := f.WriteTo(dst); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return err
	}
	return nil
}

func validatePath(p string) error {
	switch {
	case !path.IsAbs(p):
		return fmt.Errorf("remote path %q is not absolute", p)
	case strings.ContainsRune(p, 0):
		return fmt.Errorf("remote path %q contains a NUL byte", p)
	case strings.HasSuffix(p, "/"):
		return fmt.Errorf("remote path %q names a directory", p)
	}
	return nil
}

func randomSuffix() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
