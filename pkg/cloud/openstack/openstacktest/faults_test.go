package openstacktest_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/flavors"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/images"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/pagination"

	"github.com/slipway-dev/slipway/pkg/cloud/openstack/openstacktest"
)

func createServer(ctx context.Context, t *testing.T, sim *openstacktest.Sim, c clients, name string) (*servers.Server, error) {
	t.Helper()
	return servers.Create(ctx, c.compute, servers.CreateOpts{Name: name, ImageRef: sim.Images()[0].ID, FlavorRef: "3",
		Networks: []servers.Network{{UUID: findNetwork(t, sim, "private").ID}}}, nil).Extract()
}

func TestInjectedFaults(t *testing.T) {
	sim := openstacktest.New(openstacktest.Options{})
	defer sim.Close()
	ctx := context.Background()
	c := connect(t, sim, passwordAuth(sim))

	remove := sim.InjectFault(openstacktest.Fault{Service: "compute", Method: "GET", Status: 503,
		RetryAfter: 2 * time.Second, Times: 2})
	_, err := flavors.Get(ctx, c.compute, "1").Extract()
	var ue gophercloud.ErrUnexpectedResponseCode
	if !gophercloud.ResponseCodeIs(err, http.StatusServiceUnavailable) {
		t.Fatalf("want 503, got %v", err)
	}
	if e, ok := err.(gophercloud.ErrUnexpectedResponseCode); ok {
		ue = e
	}
	if got := ue.ResponseHeader.Get("Retry-After"); got != "2" {
		t.Fatalf("Retry-After = %q, want 2", got)
	}
	if _, err := images.List(c.image, images.ListOpts{}).AllPages(ctx); err != nil {
		t.Fatalf("a compute fault must not hit the image service: %v", err)
	}
	_, _ = flavors.Get(ctx, c.compute, "1").Extract()
	if _, err := flavors.Get(ctx, c.compute, "1").Extract(); err != nil {
		t.Fatalf("fault should have stopped after 2 calls: %v", err)
	}
	remove()

	// Exempt requests pass a fault that hits everything else.
	remove = sim.InjectFault(openstacktest.Fault{Status: 500, ExemptHeader: "X-Observer"})
	exempt := *c.compute
	exempt.MoreHeaders = map[string]string{"X-Observer": "1"}
	if _, err := flavors.Get(ctx, &exempt, "1").Extract(); err != nil {
		t.Fatalf("an exempt request failed: %v", err)
	}
	if _, err := flavors.Get(ctx, c.compute, "1").Extract(); !gophercloud.ResponseCodeIs(err, 500) {
		t.Fatalf("a plain request passed an always-on fault: %v", err)
	}
	remove()

	// A 10% rate fails roughly 10% of calls.
	sim.InjectFault(openstacktest.Fault{Service: "network", Rate: 0.1, Status: 500})
	failed := 0
	for range 400 {
		if _, err := networks.List(c.network, nil).AllPages(ctx); err != nil {
			failed++
		}
	}
	if failed < 20 || failed > 70 {
		t.Fatalf("10%% fault rate failed %d of 400 calls", failed)
	}
	sim.ClearFaults()
	if st := sim.Calls(); st.ByService["network"] < 400 || st.Errors < failed {
		t.Fatalf("counters missed calls: %+v", st)
	}
}

func TestQuota(t *testing.T) {
	sim := openstacktest.New(openstacktest.Options{})
	defer sim.Close()
	ctx := context.Background()
	c := connect(t, sim, passwordAuth(sim))
	sim.SetQuota(openstacktest.Quota{Instances: 5, Cores: 4, FloatingIPs: 1})

	for i, want := range []string{"", "", "Quota exceeded for cores"} { // flavor 3 has 2 vCPUs
		_, err := createServer(ctx, t, sim, c, "w")
		switch {
		case want == "" && err != nil:
			t.Fatalf("server %d: %v", i, err)
		case want != "" && (!gophercloud.ResponseCodeIs(err, http.StatusForbidden) || !strings.Contains(err.Error(), want)):
			t.Fatalf("server %d: want 403 %q, got %v", i, want, err)
		}
	}
	pub := findNetwork(t, sim, "public")
	if _, err := floatingips.Create(ctx, c.network, floatingips.CreateOpts{FloatingNetworkID: pub.ID}).Extract(); err != nil {
		t.Fatal(err)
	}
	_, err := floatingips.Create(ctx, c.network, floatingips.CreateOpts{FloatingNetworkID: pub.ID}).Extract()
	if !gophercloud.ResponseCodeIs(err, http.StatusConflict) || !strings.Contains(err.Error(), "OverQuota") {
		t.Fatalf("floating IP over quota: want 409 OverQuota, got %v", err)
	}
}

func TestServerFailuresAndVanishing(t *testing.T) {
	sim := openstacktest.New(openstacktest.Options{})
	defer sim.Close()
	ctx := context.Background()
	c := connect(t, sim, passwordAuth(sim))
	sim.FailNextServers(1, "No valid host was found.")
	bad, err := createServer(ctx, t, sim, c, "bad")
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "ERROR", func() bool {
		s, err := servers.Get(ctx, c.compute, bad.ID).Extract()
		return err == nil && s.Status == "ERROR" && s.Fault.Message == "No valid host was found."
	})
	good, _ := createServer(ctx, t, sim, c, "good")
	waitFor(t, "ACTIVE", func() bool {
		s, err := servers.Get(ctx, c.compute, good.ID).Extract()
		return err == nil && s.Status == "ACTIVE"
	})
	if err := sim.VanishServer(good.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := servers.Get(ctx, c.compute, good.ID).Extract(); !gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
		t.Fatalf("vanished server: want 404, got %v", err)
	}
	if sim.PeakServers() != 2 {
		t.Fatalf("peak servers = %d, want 2", sim.PeakServers())
	}
}

func TestDeleteTimeAndPagination(t *testing.T) {
	sim := openstacktest.New(openstacktest.Options{DeleteTime: 50 * time.Millisecond})
	defer sim.Close()
	ctx := context.Background()
	c := connect(t, sim, passwordAuth(sim))
	var ids []string
	for range 5 {
		s, err := createServer(ctx, t, sim, c, "pg")
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, s.ID)
	}
	pages := 0
	seen := 0
	err := servers.List(c.compute, servers.ListOpts{Limit: 2}).EachPage(ctx, func(_ context.Context, p pagination.Page) (bool, error) {
		pages++
		ss, err := servers.ExtractServers(p)
		seen += len(ss)
		return true, err
	})
	if err != nil || seen != 5 || pages < 3 {
		t.Fatalf("paginated list: %d servers in %d pages, err %v", seen, pages, err)
	}
	if err := servers.Delete(ctx, c.compute, ids[0]).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	s, err := servers.Get(ctx, c.compute, ids[0]).Extract()
	if err != nil || s.TaskState != "deleting" {
		t.Fatalf("right after delete: want task_state deleting, got %+v %v", s, err)
	}
	waitFor(t, "server gone", func() bool {
		_, err := servers.Get(ctx, c.compute, ids[0]).Extract()
		return gophercloud.ResponseCodeIs(err, http.StatusNotFound)
	})
}

func TestMicroversions(t *testing.T) {
	sim := openstacktest.New(openstacktest.Options{})
	defer sim.Close()
	ctx := context.Background()
	c := connect(t, sim, passwordAuth(sim))
	s, _ := createServer(ctx, t, sim, c, "mv")
	for _, tc := range []struct {
		version    string
		wantVCPUs  bool
		wantTags   bool
		wantStatus int
	}{
		{"2.1", false, false, 200},
		{"2.26", false, true, 200},
		{"2.47", true, true, 200},
		{"2.999", false, false, 406},
	} {
		t.Run(tc.version, func(t *testing.T) {
			cc := *c.compute
			cc.Microversion = tc.version
			got, err := servers.Get(ctx, &cc, s.ID).Extract()
			if tc.wantStatus != 200 {
				if !gophercloud.ResponseCodeIs(err, tc.wantStatus) {
					t.Fatalf("want %d, got %v", tc.wantStatus, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := got.Flavor["vcpus"]; ok != tc.wantVCPUs {
				t.Errorf("embedded flavor = %v, want %v", ok, tc.wantVCPUs)
			}
			if (got.Tags != nil) != tc.wantTags {
				t.Errorf("tags present = %v, want %v", got.Tags != nil, tc.wantTags)
			}
		})
	}
	cc := *c.compute
	cc.Microversion = "2.1"
	_, err := servers.Create(ctx, &cc, servers.CreateOpts{Name: "x", ImageRef: sim.Images()[0].ID, FlavorRef: "1",
		Tags: []string{"a"}}, nil).Extract()
	if !gophercloud.ResponseCodeIs(err, http.StatusBadRequest) {
		t.Fatalf("tags before 2.52: want 400, got %v", err)
	}
}

func TestNeutronFilters(t *testing.T) {
	sim := openstacktest.New(openstacktest.Options{})
	defer sim.Close()
	ctx := context.Background()
	c := connect(t, sim, passwordAuth(sim))
	for _, tc := range []struct {
		name string
		opts networks.ListOpts
		want int
	}{
		{"by name", networks.ListOpts{Name: "private"}, 1},
		{"by id", networks.ListOpts{ID: findNetwork(t, sim, "public").ID}, 1},
		{"no match", networks.ListOpts{Name: "nope"}, 0},
		{"all", networks.ListOpts{}, 2},
	} {
		pages, err := networks.List(c.network, tc.opts).AllPages(ctx)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		ns, _ := networks.ExtractNetworks(pages)
		if len(ns) != tc.want {
			t.Errorf("%s: %d networks, want %d", tc.name, len(ns), tc.want)
		}
	}
	pages, err := images.List(c.image, images.ListOpts{Name: "cirros"}).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ims, _ := images.ExtractImages(pages)
	if len(ims) != 1 || ims[0].MinDiskGigabytes != 1 {
		t.Fatalf("image by name: %+v", ims)
	}
}

func TestStuckDeleteAndDown(t *testing.T) {
	sim := openstacktest.New(openstacktest.Options{})
	defer sim.Close()
	ctx := context.Background()
	c := connect(t, sim, passwordAuth(sim))
	s, err := createServer(ctx, t, sim, c, "stuck")
	if err != nil {
		t.Fatal(err)
	}
	if err := sim.SetDeleteStuck(s.ID, true); err != nil {
		t.Fatal(err)
	}
	if err := servers.Delete(ctx, c.compute, s.ID).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	got, err := servers.Get(ctx, c.compute, s.ID).Extract()
	if err != nil || got.TaskState != "deleting" {
		t.Fatalf("stuck delete: want the server deleting, got %+v %v", got, err)
	}
	if err := sim.SetDeleteStuck(s.ID, false); err != nil {
		t.Fatal(err)
	}
	if _, err := servers.Get(ctx, c.compute, s.ID).Extract(); !gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
		t.Fatalf("unstuck: want the server gone, got %v", err)
	}

	sim.SetDown(true)
	if _, err := flavors.Get(ctx, c.compute, "1").Extract(); err == nil || gophercloud.ResponseCodeIs(err, http.StatusBadGateway) {
		t.Fatalf("down: want a connection error, got %v", err)
	}
	sim.SetDown(false)
	if _, err := flavors.Get(ctx, c.compute, "1").Extract(); err != nil {
		t.Fatalf("up again: %v", err)
	}
}
