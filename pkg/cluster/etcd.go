package cluster

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/slipway-dev/slipway/pkg/access"
	"github.com/slipway-dev/slipway/pkg/etcd"
)

// EtcdMembers lists the cluster's etcd members with their health, reached through the first
// control plane that answers.
func EtcdMembers(ctx context.Context, t *Target) ([]etcd.Member, error) {
	ec, err := access.New(t.Nodes, t.SSH).Etcd(ctx)
	if err != nil {
		return nil, err
	}
	defer ec.Close()
	return ec.Members(ctx)
}

// Snapshot is a snapshot file written by EtcdSnapshot.
type Snapshot struct {
	Path   string `json:"path"`
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
}

// EtcdSnapshot streams a consistent etcd snapshot to path on this machine, mode 0600 (it holds
// every Secret of the cluster), with path.sha256 beside it in sha256sum's format. The snapshot's
// own trailing hash is checked before the file takes its name; an existing file is never
// overwritten, and an interrupted snapshot leaves no file behind.
func EtcdSnapshot(ctx context.Context, t *Target, path string) (*Snapshot, error) {
	if _, err := os.Lstat(path); err == nil {
		return nil, fmt.Errorf("%s exists: slipway does not overwrite a snapshot; remove it or choose another name", path)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	ec, err := access.New(t.Nodes, t.SSH).Etcd(ctx)
	if err != nil {
		return nil, err
	}
	defer ec.Close()
	part, err := os.OpenFile(path+".part", os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("creating the snapshot file: %w", err)
	}
	done := false
	defer func() {
		if !done {
			part.Close()
			os.Remove(part.Name())
		}
	}()
	h := sha256.New()
	n, err := ec.Snapshot(ctx, io.MultiWriter(part, h))
	if err != nil {
		return nil, err
	}
	if err := part.Sync(); err != nil {
		return nil, fmt.Errorf("writing %s: %w", part.Name(), err)
	}
	if err := part.Close(); err != nil {
		return nil, fmt.Errorf("writing %s: %w", part.Name(), err)
	}
	// Link, not rename: a file that appeared at path meanwhile is not replaced.
	if err := os.Link(part.Name(), path); err != nil {
		return nil, fmt.Errorf("naming the snapshot %s: %w", path, err)
	}
	done = true
	os.Remove(part.Name())
	sum := hex.EncodeToString(h.Sum(nil))
	if err := os.WriteFile(path+".sha256", []byte(sum+"  "+filepath.Base(path)+"\n"), 0o600); err != nil {
		return nil, fmt.Errorf("the snapshot is %s, but its checksum file could not be written: %w", path, err)
	}
	return &Snapshot{Path: path, Bytes: n, SHA256: sum}, nil
}
