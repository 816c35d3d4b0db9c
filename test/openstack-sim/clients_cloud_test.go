package main

import (
	"crypto/ed25519"
	"crypto/rand"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/slipway-dev/slipway/pkg/cloud/openstack/openstacktest"
)

// TestOpenStackCLI runs the everyday commands of a cloud user. Independent groups run in
// parallel against one simulator; each group's steps depend on each other and run in order.
func TestOpenStackCLI(t *testing.T) {
	c := newCLI(t, openstackCLI(t), openstacktest.Options{})
	c.sim.SetQuota(openstacktest.Quota{Instances: 10, Cores: 20, RAMMiB: 51200, KeyPairs: 100, Networks: 100})
	if !c.sim.SetFlavorExtraSpecs("2", map[string]string{"hw:cpu_policy": "shared", "hw_rng:allowed": "True"}) {
		t.Fatal("flavor 2 is not seeded")
	}
	for _, g := range []struct {
		name string
		run  func(t *testing.T, c *cli)
	}{
		{"identity", testIdentity},
		{"flavors and images", testFlavorsAndImages},
		{"networks and routers", testNetworksAndRouters},
		{"security groups", testSecurityGroups},
		{"keypairs", testKeypairs},
		{"server groups, zones and quotas", testPlacementAndQuotas},
		{"servers and floating ips", testServers},
		{"volumes", testVolumes},
	} {
		t.Run(g.name, func(t *testing.T) {
			t.Parallel()
			g.run(t, c)
		})
	}
}

func testIdentity(t *testing.T, c *cli) {
	for _, cl := range []*cli{c, c.withCloudsYAML(t)} {
		var tok obj
		cl.json(t, &tok, "token", "issue")
		if tok.str("project_id") != openstacktest.ProjectID || tok.str("user_id") != openstacktest.UserID || tok.str("id") == "" {
			t.Errorf("token issue: %v", tok)
		}
	}
	var catalog []obj
	c.json(t, &catalog, "catalog", "list")
	var types []string
	for _, e := range catalog {
		types = append(types, e.str("Type"))
	}
	for _, want := range []string{"identity", "compute", "network", "image", "block-storage"} {
		if !slices.Contains(types, want) {
			t.Errorf("catalog list: no %s service in %v", want, types)
		}
	}
	var project obj
	c.json(t, &project, "project", "show", openstacktest.ProjectID)
	if project.str("name") != openstacktest.ProjectName {
		t.Errorf("project show: %v", project)
	}
}

func testFlavorsAndImages(t *testing.T, c *cli) {
	var flavors []obj
	c.json(t, &flavors, "flavor", "list")
	if len(flavors) != 4 || flavors[0].str("Name") != "m1.tiny" {
		t.Errorf("flavor list: %v", flavors)
	}
	var flavor struct {
		Name       string            `json:"name"`
		Disk       int               `json:"disk"`
		Properties map[string]string `json:"properties"`
	}
	c.json(t, &flavor, "flavor", "show", "m1.small")
	if flavor.Disk != 20 || flavor.Properties["hw:cpu_policy"] != "shared" || len(flavor.Properties) != 2 {
		t.Errorf("flavor show m1.small: %+v", flavor)
	}
	var images []obj
	c.json(t, &images, "image", "list")
	if len(images) != 4 {
		t.Errorf("image list: %v", images)
	}
	var image struct {
		Status     string `json:"status"`
		MinDisk    int    `json:"min_disk"`
		Visibility string `json:"visibility"`
	}
	c.json(t, &image, "image", "show", "cirros")
	if image.Status != "active" || image.MinDisk != 1 || image.Visibility != "public" {
		t.Errorf("image show cirros: %+v", image)
	}
	data := filepath.Join(t.TempDir(), "disk.raw")
	if err := os.WriteFile(data, make([]byte, 4096), 0o600); err != nil {
		t.Fatal(err)
	}
	var created struct {
		ID         string         `json:"id"`
		Tags       []string       `json:"tags"`
		Properties map[string]any `json:"properties"`
	}
	c.json(t, &created, "image", "create", "--file", data, "--disk-format", "raw", "--property", "os_distro=debian", "cli-image")
	c.json(t, &image, "image", "show", created.ID)
	if image.Status != "active" || created.Properties["os_distro"] != "debian" || created.Tags == nil {
		t.Errorf("image create: %+v, then %+v", created, image)
	}
	var page []obj
	c.json(t, &page, "image", "list", "--limit", "2")
	if len(page) != 2 {
		t.Errorf("image list --limit 2: %v", page)
	}
	c.ok(t, "image", "delete", created.ID)
}

func testKeypairs(t *testing.T, c *cli) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	pubFile := filepath.Join(dir, "id.pub")
	if err := os.WriteFile(pubFile, ssh.MarshalAuthorizedKey(signer.PublicKey()), 0o600); err != nil {
		t.Fatal(err)
	}
	var given, generated obj
	c.json(t, &given, "keypair", "create", "--public-key", pubFile, "given")
	if want := ssh.FingerprintLegacyMD5(signer.PublicKey()); given.str("fingerprint") != want {
		t.Errorf("keypair create --public-key: fingerprint %q, want %q", given.str("fingerprint"), want)
	}
	privFile := filepath.Join(dir, "generated.pem")
	c.json(t, &generated, "keypair", "create", "--private-key", privFile, "generated")
	pem, err := os.ReadFile(privFile)
	if err != nil {
		t.Fatal(err)
	}
	key, err := ssh.ParsePrivateKey(pem)
	if err != nil {
		t.Fatalf("the generated private key does not parse: %v", err)
	}
	if want := ssh.FingerprintLegacyMD5(key.PublicKey()); generated.str("fingerprint") != want {
		t.Errorf("generated keypair: fingerprint %q, its private key's is %q", generated.str("fingerprint"), want)
	}
	var list []obj
	c.json(t, &list, "keypair", "list")
	var shown obj
	c.json(t, &shown, "keypair", "show", "given")
	if len(list) < 2 || shown.str("fingerprint") != given.str("fingerprint") || shown.str("type") != "ssh" {
		t.Errorf("keypair list %v, show %v", list, shown)
	}
	c.ok(t, "keypair", "delete", "given", "generated")
	c.fails(t, "No Keypair found for given", "keypair", "show", "given")
}

func testPlacementAndQuotas(t *testing.T, c *cli) {
	var group obj
	c.json(t, &group, "server", "group", "create", "--policy", "anti-affinity", "spread")
	if group.str("policy") != "anti-affinity" {
		t.Errorf("server group create: %v", group)
	}
	var groups []obj
	c.json(t, &groups, "server", "group", "list")
	if !slices.ContainsFunc(groups, func(g obj) bool { return g.str("Name") == "spread" }) {
		t.Errorf("server group list: %v", groups)
	}
	c.ok(t, "server", "group", "delete", "spread")
	for _, kind := range []string{"--compute", "--network", "--volume"} {
		var zones []obj
		c.json(t, &zones, "availability", "zone", "list", kind)
		if len(zones) == 0 || zones[0].str("Zone Name") != "nova" || zones[0].str("Zone Status") != "available" {
			t.Errorf("availability zone list %s: %v", kind, zones)
		}
	}
	var quota map[string]any
	c.json(t, &quota, "quota", "show")
	for k, want := range map[string]float64{"instances": 10, "cores": 20, "ram": 51200, "key-pairs": 100, "networks": 100, "ports": -1, "volumes": -1} {
		if quota[k] != want {
			t.Errorf("quota show: %s is %v, want %v", k, quota[k], want)
		}
	}
}

func testVolumes(t *testing.T, c *cli) {
	var vol obj
	c.json(t, &vol, "volume", "create", "--size", "1", "--property", "team=infra", "v1")
	if vol.str("status") != "creating" || vol["size"] != 1.0 {
		t.Errorf("volume create: %v", vol)
	}
	waitVolume(t, c.sim, vol.str("id"), "available")
	var list []obj
	c.json(t, &list, "volume", "list")
	if !slices.ContainsFunc(list, func(v obj) bool { return v.str("Name") == "v1" && v.str("Status") == "available" }) {
		t.Errorf("volume list: %v", list)
	}
	c.ok(t, "volume", "delete", "v1")
	c.json(t, &list, "volume", "list", "--name", "v1")
	if len(list) != 0 {
		t.Errorf("volume list after delete: %v", list)
	}
}
