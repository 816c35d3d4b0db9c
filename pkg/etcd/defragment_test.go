package etcd

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// TestDefragment runs a real etcd (envtest's, from KUBEBUILDER_ASSETS) with client TLS as
// kubeadm sets it up, fills it, deletes and compacts, and checks that Defragment gives the
// space back.
func TestDefragment(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, endpoint := startEtcd(ctx, t)
	ms, err := c.Members(ctx)
	if err != nil || len(ms) != 1 {
		t.Fatalf("members %+v, %v; want one", ms, err)
	}
	if !ms[0].Leader || ms[0].ClientURL != endpoint {
		t.Errorf("member %+v; want the leader, at %s", ms[0], endpoint)
	}

	value := strings.Repeat("x", 32<<10)
	for i := range 200 {
		if _, err := c.c.Put(ctx, fmt.Sprintf("/registry/test/%04d", i), value); err != nil {
			t.Fatal(err)
		}
	}
	resp, err := c.c.Delete(ctx, "/registry/test/", clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.c.Compact(ctx, resp.Header.Revision, clientv3.WithCompactPhysical()); err != nil {
		t.Fatal(err)
	}
	before, after, err := c.Defragment(ctx, endpoint)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("database %d bytes before, %d after", before, after)
	if before < 200*32<<10 || after > before/2 {
		t.Errorf("database %d bytes before the defragmentation, %d after; want at least %d before and at most half of it after", before, after, 200*32<<10)
	}

	if _, _, err := c.Defragment(ctx, "https://127.0.0.1:"+freePort(t)); err == nil || !strings.Contains(err.Error(), "does not answer") {
		t.Errorf("defragmenting a member that is not there: %v; want an error that says it does not answer", err)
	}
}

// startEtcd runs a real etcd (envtest's, from KUBEBUILDER_ASSETS) with client TLS as kubeadm
// sets it up, and extra flags, and returns a client once its one member is healthy. Without the
// binary the test skips, or fails under CI.
func startEtcd(ctx context.Context, t *testing.T, flags ...string) (c *Client, endpoint string) {
	t.Helper()
	bin := filepath.Join(os.Getenv("KUBEBUILDER_ASSETS"), "etcd")
	if _, err := os.Stat(bin); os.Getenv("KUBEBUILDER_ASSETS") == "" || err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("no etcd binary at %q (KUBEBUILDER_ASSETS)", bin)
		}
		t.Skipf("no etcd binary at %q: set KUBEBUILDER_ASSETS (make test-race does)", bin)
	}
	dir := t.TempDir()
	creds := writeTestPKI(t, dir)
	client, peer := freePort(t), freePort(t)
	endpoint = "https://127.0.0.1:" + client
	cmd := exec.Command(bin, append([]string{"--name", "member-1", "--data-dir", filepath.Join(dir, "data"),
		"--listen-client-urls", endpoint, "--advertise-client-urls", endpoint,
		"--listen-peer-urls", "http://127.0.0.1:" + peer, "--initial-advertise-peer-urls", "http://127.0.0.1:" + peer,
		"--initial-cluster", "member-1=http://127.0.0.1:" + peer,
		"--cert-file", filepath.Join(dir, "server.crt"), "--key-file", filepath.Join(dir, "server.key"),
		"--client-cert-auth", "--trusted-ca-file", filepath.Join(dir, "ca.crt")}, flags...)...)
	var log strings.Builder
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("etcd's log:\n%s", log.String())
		}
	})
	c, err := New(ctx, []string{endpoint}, creds, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	for deadline := time.Now().Add(time.Minute); ; {
		ms, err := c.Members(ctx)
		if err == nil && len(ms) == 1 && ms[0].Healthy {
			return c, endpoint
		}
		if time.Now().After(deadline) {
			t.Fatalf("etcd did not become healthy within a minute: %v %+v", err, ms)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return fmt.Sprint(l.Addr().(*net.TCPAddr).Port)
}

// writeTestPKI writes a CA, a server certificate for 127.0.0.1 and returns client credentials
// signed by the CA, as kubeadm's etcd CA, server and healthcheck-client certificates are.
func writeTestPKI(t *testing.T, dir string) Credentials {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "etcd-ca"}, NotBefore: now.Add(-time.Minute),
		NotAfter: now.Add(time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	issue := func(serial int64, cn string, usage x509.ExtKeyUsage, ips []net.IP) (certPEM, keyPEM []byte) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: cn}, NotBefore: now.Add(-time.Minute),
			NotAfter: now.Add(time.Hour), KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage}, IPAddresses: ips}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		kder, err := x509.MarshalECPrivateKey(key)
		if err != nil {
			t.Fatal(err)
		}
		return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
	}
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	serverCert, serverKey := issue(2, "member-1", x509.ExtKeyUsageServerAuth, []net.IP{net.IPv4(127, 0, 0, 1)})
	for name, data := range map[string][]byte{"ca.crt": caPEM, "server.crt": serverCert, "server.key": serverKey} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	clientCert, clientKey := issue(3, "kube-etcd-healthcheck-client", x509.ExtKeyUsageClientAuth, nil)
	return Credentials{CA: caPEM, Cert: clientCert, Key: clientKey}
}
