package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	tfout "github.com/slipway-dev/slipway/pkg/terraform"
)

// checkProxy runs `slipway proxy` and reaches the API at the first control plane's private
// address, on the cloud's private network, with a kubeconfig from `slipway kubeconfig
// --proxy-url`: each request goes through the bastion and a control plane's SSH connection.
// The proxy refuses any other destination and stops cleanly on SIGINT.
func (h *harness) checkProxy(t *testing.T, manifest, tfDir string, out *tfout.Output) {
	t.Helper()
	cmd := exec.Command(slipwayBin, "proxy", "-m", manifest, "-t", tfDir, "--listen", "127.0.0.1:0", "-o", "json", "--verbose")
	cmd.Dir = h.dir
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+filepath.Join(h.dir, "config"))
	var log lockedBuffer
	cmd.Stderr = &log
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stopped := false
	defer func() {
		if !stopped {
			_ = cmd.Process.Kill()
			<-exited
		}
		t.Logf("slipway proxy's log:\n%s", log.Stamped())
	}()

	var info struct {
		URL     string   `json:"url"`
		Via     string   `json:"via"`
		Allowed []string `json:"allowed"`
	}
	decoded := make(chan error, 1)
	go func() { decoded <- json.NewDecoder(bufio.NewReader(stdout)).Decode(&info) }()
	select {
	case err := <-decoded:
		if err != nil {
			t.Fatalf("slipway proxy -o json printed no object: %v", err)
		}
	case err := <-exited:
		stopped = true
		t.Fatalf("slipway proxy exited before serving: %v", err)
	case <-time.After(3 * time.Minute):
		t.Fatal("slipway proxy did not serve within 3 minutes")
	}
	private := net.JoinHostPort(out.ControlPlane.PrivateAddress[0], "6443")
	t.Logf("slipway proxy serves on %s through %s, allowing %v", info.URL, info.Via, info.Allowed)

	r := h.slipway(nil, "kubeconfig", "-m", manifest, "-t", tfDir, "--proxy-url", info.URL)
	if r.code != 0 {
		t.Fatalf("kubeconfig --proxy-url: exit code %d", r.code)
	}
	cfg, err := clientcmd.Load([]byte(r.stdout))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cfg.Clusters {
		if c.ProxyURL != info.URL {
			t.Errorf("kubeconfig --proxy-url wrote proxy-url %q, want %q", c.ProxyURL, info.URL)
		}
		c.Server = "https://" + private
	}
	rc, err := clientcmd.NewDefaultClientConfig(*cfg, nil).ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	rc.Timeout = 20 * time.Second
	c, err := kubernetes.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := c.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("listing Nodes at %s through slipway proxy: %v", private, err)
	}
	if len(nodes.Items) < len(out.ControlPlane.PrivateAddress) {
		t.Errorf("through the proxy: %d Nodes, want at least %d", len(nodes.Items), len(out.ControlPlane.PrivateAddress))
	}
	if want := "tunnel to " + private; !strings.Contains(log.String(), want) {
		t.Errorf("the proxy's --verbose log does not show %q", want)
	}

	// Anything but the API is refused: the bastion's own SSH port, say.
	refused := net.JoinHostPort(out.ControlPlane.Bastion, "22")
	if status := connectStatus(t, strings.TrimPrefix(info.URL, "http://"), refused); status != http.StatusForbidden {
		t.Errorf("CONNECT %s through the proxy: status %d, want 403 Forbidden", refused, status)
	}

	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		stopped = true
		if err != nil {
			t.Errorf("slipway proxy on SIGINT: %v, want exit code 0", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("slipway proxy did not stop within 30 s of SIGINT")
	}
	if _, err := c.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{}); err == nil {
		t.Errorf("the API still answers at %s through the stopped proxy", private)
	}
}

// connectStatus sends CONNECT dest to the proxy at addr and returns the status of its answer.
func connectStatus(t *testing.T, addr, dest string) int {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := fmt.Fprintf(c, "CONNECT %[1]s HTTP/1.1\r\nHost: %[1]s\r\n\r\n", dest); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: http.MethodConnect})
	if err != nil {
		t.Fatalf("the proxy's answer to CONNECT %s: %v", dest, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}
