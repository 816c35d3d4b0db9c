package etcd

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"hash"
	"io"
)

// Snapshot streams a consistent snapshot of etcd (its whole backend database, what `etcdctl
// snapshot save` takes) from one member into w, and checks the SHA-256 that etcd appends to the
// stream. It returns the number of bytes written, the hash included, as etcdutl expects the file.
func (c *Client) Snapshot(ctx context.Context, w io.Writer) (int64, error) {
	rc, err := c.c.Snapshot(ctx)
	if err != nil {
		return 0, fmt.Errorf("starting an etcd snapshot: %w", err)
	}
	defer rc.Close()
	tw := &trailerWriter{w: w, h: sha256.New()}
	n, err := io.Copy(tw, rc)
	if err != nil {
		return n, fmt.Errorf("receiving the etcd snapshot after %d bytes: %w", n, err)
	}
	if err := tw.check(); err != nil {
		return n, err
	}
	return n, nil
}

// VerifySnapshot checks a snapshot file's trailing SHA-256 against its content.
func VerifySnapshot(r io.Reader) error {
	tw := &trailerWriter{w: io.Discard, h: sha256.New()}
	if _, err := io.Copy(tw, r); err != nil {
		return err
	}
	return tw.check()
}

// trailerWriter passes everything to w and hashes all but the last sha256.Size bytes, which it
// keeps to compare with the hash.
type trailerWriter struct {
	w    io.Writer
	h    hash.Hash
	tail []byte
	n    int64
}

func (t *trailerWriter) Write(p []byte) (int, error) {
	n, err := t.w.Write(p)
	if err != nil {
		return n, err
	}
	t.n += int64(n)
	t.tail = append(t.tail, p...)
	if over := len(t.tail) - sha256.Size; over > 0 {
		t.h.Write(t.tail[:over])
		t.tail = append(t.tail[:0], t.tail[over:]...)
	}
	return n, nil
}

func (t *trailerWriter) check() error {
	if len(t.tail) < sha256.Size {
		return fmt.Errorf("the etcd snapshot is %d bytes: too short to hold its SHA-256", t.n)
	}
	if !bytes.Equal(t.h.Sum(nil), t.tail) {
		return fmt.Errorf("the etcd snapshot's SHA-256 does not match its %d bytes of data: it is corrupt or incomplete", t.n-sha256.Size)
	}
	return nil
}
