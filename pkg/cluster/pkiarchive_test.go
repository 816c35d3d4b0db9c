package cluster

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/rand"
	"errors"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/slipway-dev/slipway/pkg/config"
)

// member is one entry of a hand-made archive.
type member struct {
	hdr  tar.Header
	data []byte
}

// archive packs members as given: names, types and sizes that slipway never writes.
func archive(t *testing.T, members []member) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, m := range members {
		hdr := m.hdr
		if hdr.Typeflag == 0 {
			hdr.Typeflag = tar.TypeReg
		}
		if hdr.Typeflag == tar.TypeReg && hdr.Size == 0 {
			hdr.Size = int64(len(m.data))
		}
		hdr.Mode = 0o600
		if err := tw.WriteHeader(&hdr); err != nil {
			t.Fatal(err)
		}
		if len(m.data) > 0 {
			if _, err := tw.Write(m.data); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return gzipped(t, buf.Bytes())
}

// goodMembers are the members of a backup that LoadRestore accepts, in slipway's order.
func goodMembers(t *testing.T) []member {
	t.Helper()
	files := testPKI(t)
	var out []member
	for _, name := range knownMembers() {
		if f, ok := strings.CutPrefix(name, pkiPrefix); ok {
			out = append(out, member{hdr: tar.Header{Name: name}, data: files[f]})
		}
	}
	return out
}

// gzipped compresses data.
func gzipped(t *testing.T, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// paxBomb is a tar that holds, before its one member, two PAX headers of 900 KiB each, which
// archive/tar reads whole: 1.8 MiB uncompressed, a few KiB compressed.
func paxBomb(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	comment := strings.Repeat("x", 900<<10)
	if err := tw.WriteHeader(&tar.Header{Name: "pki/ca.crt", Typeflag: tar.TypeReg, Mode: 0o600, PAXRecords: map[string]string{"comment": comment}, Format: tar.FormatPAX}); err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	raw := buf.Bytes()
	// The PAX header block and its data, padded to blocks, come first.
	paxLen := 512 + (len(raw)-512-1024-512)/512*512
	pax := raw[:paxLen]
	return gzipped(t, append(append(append([]byte{}, pax...), pax...), raw[paxLen:]...))
}

// TestHostileBackupsAreRefused: restore-etcd puts a backup's members on the new leader as
// root, so a backup with anything but slipway's own members (each a regular file, once, of a
// sensible size) is refused whole, naming the member, before any host is reached; the archive
// is read with a limit, so a gzip bomb is an error, not an out-of-memory crash; and a FIFO or a
// device is refused before it is read, so nothing hangs. Every refusal is an invalid input
// (exit code 3). Before, pki/../../etc/cron.d/x was uploaded to /etc/cron.d/x, and a 2 MiB
// ca.crt was silently cut to 1 MiB.
func TestHostileBackupsAreRefused(t *testing.T) {
	dir := t.TempDir()
	write := fileWriter(t, dir)
	snap := write("etcd.db", testSnapshot([]byte("bbolt pages")))
	with := func(extra ...member) []byte { return archive(t, append(goodMembers(t), extra...)) }
	without := func(name string, extra ...member) []byte {
		var ms []member
		for _, m := range goodMembers(t) {
			if m.hdr.Name != name {
				ms = append(ms, m)
			}
		}
		return archive(t, append(ms, extra...))
	}
	if _, err := LoadRestore(snap, write("good.tar.gz", with()), false); err != nil {
		t.Fatalf("the hand-made archive of a good backup: %v", err)
	}
	random := make([]byte, 2<<20)
	_, _ = rand.Read(random)
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"a path out of the PKI directory", with(member{hdr: tar.Header{Name: "pki/../../etc/cron.d/x"}, data: []byte("* * * * * root sh -c id\n")}),
			`member "pki/../../etc/cron.d/x" is not a file of slipway's PKI backups (encryption/config.yaml, pki/ca.crt, pki/ca.key, pki/etcd/ca.crt`},
		{"an absolute path", with(member{hdr: tar.Header{Name: "/etc/kubernetes/pki/ca.crt"}, data: []byte("x")}), `member "/etc/kubernetes/pki/ca.crt" is not a file of slipway's PKI backups`},
		{"a name with a dot", with(member{hdr: tar.Header{Name: "pki/./ca.crt"}, data: []byte("x")}), `member "pki/./ca.crt" is not a file`},
		{"a control character in a name", with(member{hdr: tar.Header{Name: "pki/ca.crt\n\x1b[2J"}, data: []byte("x")}), `member "pki/ca.crt\n\x1b[2J" is not a file`},
		{"a certificate slipway does not back up", with(member{hdr: tar.Header{Name: "pki/apiserver.key"}, data: []byte("x")}), `member "pki/apiserver.key" is not a file`},
		{"a symbolic link", without("pki/ca.key", member{hdr: tar.Header{Name: "pki/ca.key", Typeflag: tar.TypeSymlink, Linkname: "/etc/shadow"}}), `member "pki/ca.key" is a symbolic link, not a regular file`},
		{"a hard link", without("pki/ca.key", member{hdr: tar.Header{Name: "pki/ca.key", Typeflag: tar.TypeLink, Linkname: "pki/ca.crt"}}), `member "pki/ca.key" is a hard link`},
		{"a device", without("pki/sa.key", member{hdr: tar.Header{Name: "pki/sa.key", Typeflag: tar.TypeChar, Devmajor: 1, Devminor: 5}}), `member "pki/sa.key" is a character device`},
		{"a block device", without("pki/sa.key", member{hdr: tar.Header{Name: "pki/sa.key", Typeflag: tar.TypeBlock, Devmajor: 8}}), `member "pki/sa.key" is a block device`},
		{"a FIFO", without("pki/sa.pub", member{hdr: tar.Header{Name: "pki/sa.pub", Typeflag: tar.TypeFifo}}), `member "pki/sa.pub" is a FIFO`},
		{"a directory", with(member{hdr: tar.Header{Name: "encryption/config.yaml", Typeflag: tar.TypeDir}}), `member "encryption/config.yaml" is a directory`},
		{"a member twice", with(member{hdr: tar.Header{Name: "pki/ca.crt"}, data: []byte("the second")}), `member "pki/ca.crt" is in the archive twice`},
		{"a member over its limit", without("pki/ca.crt", member{hdr: tar.Header{Name: "pki/ca.crt"}, data: bytes.Repeat([]byte("A"), 64<<10+1)}),
			`member "pki/ca.crt" is 65537 bytes, more than the 64 KiB a file of a PKI backup may have`},
		{"a gzip bomb of one member", without("pki/ca.crt", member{hdr: tar.Header{Name: "pki/ca.crt"}, data: make([]byte, 64<<20)}), `member "pki/ca.crt" is 67108864 bytes`},
		{"a gzip bomb of headers", paxBomb(t), "uncompressed, the archive is larger than 1 MiB, the most slipway reads from it"},
		{"a huge file", random, "it is 2097152 bytes, more than the 1 MiB a PKI backup may have"},
		{"a tar that is not gzipped", func() []byte { var b bytes.Buffer; tw := tar.NewWriter(&b); tw.Close(); return b.Bytes() }(), "not a gzipped tar archive of slipway's"},
		{"gzipped junk", gzipped(t, bytes.Repeat([]byte("junk"), 1000)), "not a gzipped tar archive of slipway's"},
		{"nothing in it", archive(t, nil), "ca.crt is missing"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := write(strings.ReplaceAll(tc.name, " ", "-")+".tar.gz", tc.data)
			_, err := LoadRestore(snap, path, false)
			var ce *config.Error
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "PKI backup "+path+" is invalid") || !errors.As(err, &ce) {
				t.Errorf("error %v\nwant an invalid input (exit code 3) naming %s with %q", err, path, tc.want)
			}
		})
	}

	// A FIFO is refused at once, for the backup and the snapshot alike: reading one would wait
	// for a writer that never comes.
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][2]string{{snap, fifo}, {fifo, write("good2.tar.gz", with())}} {
		done := make(chan error, 1)
		go func() { _, err := LoadRestore(args[0], args[1], false); done <- err }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), fifo+" is invalid: not a regular file (a FIFO)") {
				t.Errorf("LoadRestore(%s, %s) = %v; want a FIFO refused", args[0], args[1], err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("LoadRestore(%s, %s) hangs on a FIFO", args[0], args[1])
		}
	}
}

// TestRestoredEncryption: a backup with an encryption configuration restores only a manifest
// that enables encryption (its Secrets read with nothing else, and encryption cannot be turned
// off), a manifest that enables it only a backup that holds one, and the configuration must be
// one slipway wrote; errors never show its keys.
func TestRestoredEncryption(t *testing.T) {
	dir := t.TempDir()
	write := fileWriter(t, dir)
	snap := write("etcd.db", testSnapshot([]byte("bbolt pages")))
	conf := testEncryption(t, "key-2")
	backup := func(name string, enc []byte) string {
		data, err := writePKIBackup(pkiArchive{PKI: testPKI(t), Encryption: enc})
		if err != nil {
			t.Fatal(err)
		}
		return write(name, data)
	}
	encrypted, plain := backup("encrypted.tar.gz", conf), backup("plain.tar.gz", nil)

	r, err := LoadRestore(snap, encrypted, true)
	if err != nil || !bytes.Equal(r.Encryption, conf) {
		t.Fatalf("a backup with the encryption configuration, encryption enabled: %v", err)
	}
	if r, err := LoadRestore(snap, plain, false); err != nil || r.Encryption != nil {
		t.Fatalf("a backup without, encryption disabled: %v", err)
	}
	broken := bytes.Replace(conf, []byte("aescbc"), []byte("secretbox"), 1)
	for _, tc := range []struct {
		name      string
		pki       string
		encrypted bool
		want      string
	}{
		{"encryption turned off", encrypted, false, "it holds the encryption configuration of a cluster that encrypted Secrets at rest, and the manifest has encryption.enabled: false"},
		{"no configuration to read the Secrets with", plain, true, "it holds no encryption configuration, and the manifest has encryption.enabled: true"},
		{"a configuration slipway did not write", backup("broken.tar.gz", broken), true, "encryption/config.yaml: /etc/kubernetes/encryption/config.yaml is not an encryption configuration slipway wrote"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadRestore(snap, tc.pki, tc.encrypted)
			var ce *config.Error
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.pki) || !errors.As(err, &ce) {
				t.Errorf("error %v\nwant an invalid input naming %s with %q", err, tc.pki, tc.want)
			}
			if err != nil && strings.Contains(err.Error(), "secret:") {
				t.Errorf("the error shows the configuration: %v", err)
			}
		})
	}
}
