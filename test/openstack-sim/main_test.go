package main

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
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
	for _, args := range [][]string{{"--error-rate", "2"}, {"extra"}, {"--listen", "nonsense"},
		{"--provider-network", "sandbox"}, {"--provider-network", "sandbox=slipway-sandbox"}, {"--image", "x"}} {
		if err := run(context.Background(), args, io.Discard); err == nil {
			t.Errorf("%v: want an error", args)
		}
	}
}

func TestProviderNetworkFlag(t *testing.T) {
	for _, tt := range []struct {
		name    string
		values  []string
		want    string
		wantErr bool
	}{
		{name: "one", values: []string{"sandbox=slipway-sandbox"}, want: "sandbox=slipway-sandbox"},
		{name: "two, sorted", values: []string{"b=docker-b", "a=docker-a"}, want: "a=docker-a,b=docker-b"},
		{name: "the same twice", values: []string{"a=x", "a=x"}, want: "a=x"},
		{name: "one name, two networks", values: []string{"a=x", "a=y"}, wantErr: true},
		{name: "no equals sign", values: []string{"sandbox"}, wantErr: true},
		{name: "no name", values: []string{"=slipway-sandbox"}, wantErr: true},
		{name: "no Docker network", values: []string{"sandbox="}, wantErr: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := providerNetworks{}
			var err error
			for _, v := range tt.values {
				if err = p.Set(v); err != nil {
					break
				}
			}
			if (err != nil) != tt.wantErr {
				t.Fatalf("Set(%q): %v, want error %v", tt.values, err, tt.wantErr)
			}
			if err == nil && p.String() != tt.want {
				t.Errorf("got %q, want %q", p.String(), tt.want)
			}
		})
	}
}

func TestPortForwardFlag(t *testing.T) {
	for _, tt := range []struct {
		name    string
		values  []string
		want    string
		wantErr bool
	}{
		{name: "one", values: []string{"5000=172.30.0.2:5000"}, want: "5000=172.30.0.2:5000"},
		{name: "two, sorted", values: []string{"8080=h:80", "5000=h:5000"}, want: "5000=h:5000,8080=h:80"},
		{name: "one port twice", values: []string{"5000=a:1", "5000=b:1"}, wantErr: true},
		{name: "no equals sign", values: []string{"5000"}, wantErr: true},
		{name: "port not a number", values: []string{"http=h:80"}, wantErr: true},
		{name: "port out of range", values: []string{"70000=h:80"}, wantErr: true},
		{name: "target without port", values: []string{"5000=h"}, wantErr: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := portForwards{}
			var err error
			for _, v := range tt.values {
				if err = p.Set(v); err != nil {
					break
				}
			}
			if (err != nil) != tt.wantErr {
				t.Fatalf("Set: %v, want error %t", err, tt.wantErr)
			}
			if err == nil && p.String() != tt.want {
				t.Errorf("String() = %q, want %q", p.String(), tt.want)
			}
		})
	}
}

// TestForward serves an HTTP server through --forward, at the API's address.
func TestForward(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "mirror") }))
	defer srv.Close()
	free, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(free.Addr().(*net.TCPAddr).Port)
	free.Close()
	ctx, cancel := context.WithCancel(context.Background())
	r, w := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"--listen", "127.0.0.1:0", "--forward", port + "=" + strings.TrimPrefix(srv.URL, "http://")}, w)
		w.Close()
	}()
	sc := bufio.NewScanner(r)
	for sc.Scan() && !strings.HasPrefix(sc.Text(), "# control API") {
	}
	go func() { _, _ = io.Copy(io.Discard, r) }()
	resp, err := http.Get("http://127.0.0.1:" + port + "/")
	if err != nil {
		t.Fatalf("through the forward: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "mirror" {
		t.Errorf("through the forward: %q, want %q", body, "mirror")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
