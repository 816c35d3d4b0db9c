package cluster

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"sort"
	"strings"
	"syscall"

	"github.com/slipway-dev/slipway/pkg/internal/bounded"
)

// The format of a PKI backup: a gzipped tar of regular files, each mode 0600, named pki/<name>
// for each of pkiFiles and, for a cluster that encrypts Secrets at rest, encryptionMember.
// restore-etcd puts each on the new leader as root, so reading one trusts nothing: a member
// that is not one of these names (a path that climbs out, an absolute one), is not a regular
// file (a link, a device), is there twice or is larger than a member can be refuses the whole
// backup, and the archive is read with a limit, compressed and uncompressed.

// pkiFiles are what a cluster cannot be rebuilt without, relative to /etc/kubernetes/pki: the
// CAs that sign every certificate (cluster, front proxy, etcd) with their keys, and the key that
// signs service-account tokens. kubeadm issues everything else again from them.
var pkiFiles = []string{
	"ca.crt", "ca.key",
	"front-proxy-ca.crt", "front-proxy-ca.key",
	"etcd/ca.crt", "etcd/ca.key",
	"sa.key", "sa.pub",
}

const (
	pkiPrefix = "pki/"
	// encryptionMember is the encryption configuration (encryption.File) of a cluster that
	// encrypts Secrets at rest: its snapshots cannot be read without it.
	encryptionMember = "encryption/config.yaml"
	// maxMemberBytes bounds each file of a backup, and each file apply reads for one from a
	// control plane: a CA certificate, or a 4096-bit RSA key, is a few KiB, and the encryption
	// configuration is bounded by encryption.MaxFileBytes, which is no larger.
	maxMemberBytes = 64 << 10
	// maxBackupBytes bounds the archive, compressed as on disk and uncompressed: its at most
	// nine members of at most maxMemberBytes and their headers fit.
	maxBackupBytes = 1 << 20
)

// pkiArchive is what a PKI backup holds. Both fields hold keys: never log them.
type pkiArchive struct {
	// PKI holds each of pkiFiles by its name under /etc/kubernetes/pki.
	PKI map[string][]byte
	// Encryption is the encryption configuration file, nil for a cluster without one.
	Encryption []byte
}

// members returns the archive's members by name.
func (a pkiArchive) members() map[string][]byte {
	m := map[string][]byte{}
	for name, data := range a.PKI {
		m[pkiPrefix+name] = data
	}
	if a.Encryption != nil {
		m[encryptionMember] = a.Encryption
	}
	return m
}

// samePKI says whether a and b hold the same CAs and keys (their encryption configurations
// aside).
func (a pkiArchive) samePKI(b pkiArchive) bool {
	if len(a.PKI) != len(b.PKI) {
		return false
	}
	for name, data := range a.PKI {
		if !bytes.Equal(b.PKI[name], data) {
			return false
		}
	}
	return true
}

// writePKIBackup packs a into a gzipped tar, in a stable order, each entry mode 0600.
func writePKIBackup(a pkiArchive) ([]byte, error) {
	members := a.members()
	names := make([]string, 0, len(members))
	for name := range members {
		names = append(names, name)
	}
	sort.Strings(names)
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, name := range names {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o600, Size: int64(len(members[name])), Typeflag: tar.TypeReg}); err != nil {
			return nil, err
		}
		if _, err := tw.Write(members[name]); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// knownMembers are the names a backup's members may have.
func knownMembers() []string {
	names := []string{encryptionMember}
	for _, f := range pkiFiles {
		names = append(names, pkiPrefix+f)
	}
	sort.Strings(names)
	return names
}

// readPKIBackup unpacks a backup in writePKIBackup's format, and refuses anything else. Its
// errors name the member at fault, quoted, never its content. It does not check that every
// file is there or what each holds: checkPKI does.
func readPKIBackup(r io.Reader) (pkiArchive, error) {
	notArchive := func(err error) (pkiArchive, error) {
		if bounded.IsTooLarge(err) {
			return pkiArchive{}, err
		}
		return pkiArchive{}, fmt.Errorf("not a gzipped tar archive of slipway's: %w", err)
	}
	zr, err := gzip.NewReader(r)
	if err != nil {
		return notArchive(err)
	}
	tr := tar.NewReader(&bounded.Reader{R: zr, Max: maxBackupBytes, What: "uncompressed, the archive"})
	known := knownMembers()
	a := pkiArchive{PKI: map[string][]byte{}}
	seen := map[string]bool{}
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return a, nil
		}
		if err != nil {
			return notArchive(err)
		}
		name := hdr.Name
		switch {
		case !slices.Contains(known, name):
			return pkiArchive{}, fmt.Errorf("member %q is not a file of slipway's PKI backups (%s): the backup is refused", name, strings.Join(known, ", "))
		case hdr.Typeflag != tar.TypeReg:
			return pkiArchive{}, fmt.Errorf("member %q is %s, not a regular file: the backup is refused", name, memberType(hdr.Typeflag))
		case seen[name]:
			return pkiArchive{}, fmt.Errorf("member %q is in the archive twice: the backup is refused", name)
		case hdr.Size > maxMemberBytes:
			return pkiArchive{}, fmt.Errorf("member %q is %d bytes, more than the %s a file of a PKI backup may have: the backup is refused", name, hdr.Size, bounded.Size(maxMemberBytes))
		}
		seen[name] = true
		data, err := bounded.ReadAll(tr, maxMemberBytes, fmt.Sprintf("member %q", name))
		if err != nil {
			return notArchive(err)
		}
		if f, ok := strings.CutPrefix(name, pkiPrefix); ok {
			a.PKI[f] = data
		} else {
			a.Encryption = data
		}
	}
}

// memberType names a tar entry's type for an error.
func memberType(flag byte) string {
	switch flag {
	case tar.TypeSymlink:
		return "a symbolic link"
	case tar.TypeLink:
		return "a hard link"
	case tar.TypeChar:
		return "a character device"
	case tar.TypeBlock:
		return "a block device"
	case tar.TypeDir:
		return "a directory"
	case tar.TypeFifo:
		return "a FIFO"
	}
	return fmt.Sprintf("an entry of type %q", flag)
}

// openRegular opens path for reading if it is a regular file, and refuses anything else before
// reading from it: a directory, a device such as /dev/zero, or a FIFO, which is opened without
// waiting for a writer (a plain open would block until one came).
func openRegular(path string) (*os.File, fs.FileInfo, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, fmt.Errorf("not a regular file (%s)", fileType(fi.Mode()))
	}
	return f, fi, nil
}

func fileType(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return "mode " + m.String()
}

// loadPKIBackup reads the PKI backup at path: a regular file of at most maxBackupBytes in
// readPKIBackup's format. A missing file is an error that wraps fs.ErrNotExist.
func loadPKIBackup(path string) (pkiArchive, error) {
	f, fi, err := openRegular(path)
	if err != nil {
		return pkiArchive{}, err
	}
	defer f.Close()
	if fi.Size() > maxBackupBytes {
		return pkiArchive{}, fmt.Errorf("it is %d bytes, more than the %s a PKI backup may have (one is a few KiB)", fi.Size(), bounded.Size(maxBackupBytes))
	}
	return readPKIBackup(&bounded.Reader{R: f, Max: maxBackupBytes, What: "the archive"})
}
