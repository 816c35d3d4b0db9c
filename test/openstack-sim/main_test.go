package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
)

// TestServesStandalone starts the command, authenticates with the variables it prints, and
// stops it.
func TestServesStandalone(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	r, w := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"--listen", "127.0.0.1:0", "--build-time", "0s"}, w); w.Close() }()
	env := map[string]string{}
	sc := bufio.NewScanner(r)
	for sc.Scan() && !strings.HasPrefix(sc.Text(), "# control API") {
		for _, f := range strings.Fields(strings.TrimPrefix(sc.Text(), "export ")) {
			if k, v, ok := strings.Cut(f, "="); ok {
				env[k] = v
			}
		}
	}
	go func() { _, _ = io.Copy(io.Discard, r) }()
	_, err := openstack.AuthenticatedClient(ctx, gophercloud.AuthOptions{IdentityEndpoint: env["OS_AUTH_URL"],
		Username: env["OS_USERNAME"], Password: env["OS_PASSWORD"], DomainName: env["OS_DOMAIN_NAME"],
		TenantName: env["OS_PROJECT_NAME"]})
	if err != nil {
		t.Fatalf("authenticating with the printed variables %v: %v", env, err)
	}
	resp, err := http.Get(strings.TrimSuffix(env["OS_AUTH_URL"], "/identity/v3") + "/_sim/state")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("control API: %v %v", resp, err)
	}
	resp.Body.Close()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the command did not stop")
	}
}

func TestRejectsBadFlags(t *testing.T) {
	for _, args := range [][]string{{"--error-rate", "2"}, {"extra"}, {"--listen", "nonsense"}} {
		if err := run(context.Background(), args, io.Discard); err == nil {
			t.Errorf("%v: want an error", args)
		}
	}
}
