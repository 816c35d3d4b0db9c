package openstacktest_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/slipway-dev/slipway/pkg/cloud/openstack/openstacktest"
)

// wire talks to a Sim with plain HTTP, to check status codes and bodies byte for byte where
// no client library would show them.
type wire struct {
	t     *testing.T
	sim   *openstacktest.Sim
	token string
}

func newWire(t *testing.T) *wire {
	t.Helper()
	sim := openstacktest.New(openstacktest.Options{})
	t.Cleanup(sim.Close)
	w := &wire{t: t, sim: sim}
	auth := map[string]any{"auth": map[string]any{
		"identity": map[string]any{"methods": []string{"password"}, "password": map[string]any{"user": map[string]any{
			"name": openstacktest.Username, "password": openstacktest.Password, "domain": map[string]any{"name": openstacktest.DomainName}}}},
		"scope": map[string]any{"project": map[string]any{"id": openstacktest.ProjectID}}}}
	resp := w.do("POST", "/identity/v3/auth/tokens", auth, nil)
	w.token = resp.Header.Get("X-Subject-Token")
	if resp.StatusCode != http.StatusCreated || w.token == "" {
		t.Fatalf("authenticating: %s", resp.Status)
	}
	return w
}

func (w *wire) do(method, path string, body any, header map[string]string) *http.Response {
	w.t.Helper()
	var r io.Reader
	if body != nil {
		data, _ := json.Marshal(body)
		r = bytes.NewReader(data)
	}
	req, _ := http.NewRequest(method, w.sim.URL()+path, r)
	req.Header.Set("X-Auth-Token", w.token)
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		w.t.Fatal(err)
	}
	return resp
}

// call sends a request and decodes the JSON answer (nil when there is none).
func (w *wire) call(method, path string, body any, header map[string]string) (int, map[string]any) {
	w.t.Helper()
	resp := w.do(method, path, body, header)
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if len(data) > 0 && strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		if err := json.Unmarshal(data, &out); err != nil {
			w.t.Fatalf("%s %s: %v in %q", method, path, err, data)
		}
	}
	return resp.StatusCode, out
}

// expect checks a call's status and that its JSON contains every string of want.
func (w *wire) expect(method, path string, body any, header map[string]string, status int, want ...string) map[string]any {
	w.t.Helper()
	got, out := w.call(method, path, body, header)
	data, _ := json.Marshal(out)
	if got != status {
		w.t.Errorf("%s %s: status %d, want %d: %s", method, path, got, status, data)
	}
	for _, s := range want {
		if !strings.Contains(string(data), s) {
			w.t.Errorf("%s %s: %s lacks %q", method, path, data, s)
		}
	}
	return out
}

func TestWireErrors(t *testing.T) {
	w := newWire(t)
	net := w.sim.Networks()[0].ID
	for _, tc := range []struct {
		name, method, path string
		body               any
		status             int
		want               []string
	}{
		{"unknown compute route", "GET", "/compute/v2.1/os-nothing", nil, 404, []string{`"itemNotFound"`, "GET /compute/v2.1/os-nothing"}},
		{"unknown network route", "DELETE", "/network/v2.0/nothing/1", nil, 404, []string{`"NeutronError"`, "DELETE /network/v2.0/nothing/1"}},
		{"unrecognized attribute", "POST", "/network/v2.0/networks", map[string]any{"network": map[string]any{"name": "x", "provider:network_type": "vlan"}},
			400, []string{"Unrecognized attribute(s) 'provider:network_type'"}},
		{"read-only on update", "PUT", "/network/v2.0/networks/" + net, map[string]any{"network": map[string]any{"availability_zone_hints": []string{}}},
			400, []string{"Cannot update read-only attribute availability_zone_hints"}},
		{"admin-only attribute", "POST", "/network/v2.0/networks", map[string]any{"network": map[string]any{"shared": true}}, 403, []string{"disallowed by policy"}},
		{"user data not base64", "POST", "/compute/v2.1/servers", map[string]any{"server": map[string]any{"name": "x", "imageRef": w.sim.Images()[0].ID,
			"flavorRef": "2", "networks": "none", "user_data": "not base64!"}}, 400, []string{"User data needs to be valid base 64."}},
		{"extra specs are the operator's", "POST", "/compute/v2.1/flavors/1/os-extra_specs", map[string]any{"extra_specs": map[string]string{"a": "b"}},
			403, []string{"os-flavor-extra-specs:create"}},
		{"duplicate subnet range", "POST", "/network/v2.0/subnets", map[string]any{"subnet": map[string]any{"network_id": net, "cidr": "10.0.5.0/24", "ip_version": 4}},
			400, []string{"overlaps with another subnet"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w.t = t
			w.expect(tc.method, tc.path, tc.body, nil, tc.status, tc.want...)
		})
	}
}

// TestNeutronPaginationAndRevisions pages through networks by their links, filters by tags
// and fields, and checks If-Match preconditions and the tags sub-resources.
func TestNeutronPaginationAndRevisions(t *testing.T) {
	w := newWire(t)
	for i := range 3 {
		w.sim.AddNetwork(fmt.Sprintf("extra-%d", i), fmt.Sprintf("10.%d.0.0/24", 100+i), false)
	}
	var seen []string
	next := "/network/v2.0/networks?limit=2&fields=id&fields=name"
	for pages := 0; next != ""; pages++ {
		if pages > 5 {
			t.Fatal("pagination does not end")
		}
		_, out := w.call("GET", next, nil, nil)
		for _, n := range out["networks"].([]any) {
			m := n.(map[string]any)
			if len(m) != 2 {
				t.Errorf("fields=id&fields=name gave %v", m)
			}
			seen = append(seen, m["id"].(string))
		}
		next = ""
		links, _ := out["networks_links"].([]any)
		for _, l := range links {
			if l := l.(map[string]any); l["rel"] == "next" {
				next = strings.TrimPrefix(l["href"].(string), w.sim.URL())
			}
		}
	}
	if len(seen) != 5 {
		t.Errorf("paging with limit=2 saw %d networks, want 5: %v", len(seen), seen)
	}

	id := seen[0]
	path := "/network/v2.0/networks/" + id
	rev := w.expect("GET", path, nil, nil, 200)["network"].(map[string]any)["revision_number"].(float64)
	w.expect("PUT", path, map[string]any{"network": map[string]any{"name": "renamed"}},
		map[string]string{"If-Match": fmt.Sprintf("revision_number=%d", int(rev)+7)}, 412, "RevisionNumberConstraintFailed")
	w.expect("PUT", path, map[string]any{"network": map[string]any{"name": "renamed", "mtu": 1400}},
		map[string]string{"If-Match": fmt.Sprintf("revision_number=%d", int(rev))}, 200, `"name":"renamed"`, `"mtu":1400`,
		fmt.Sprintf(`"revision_number":%d`, int(rev)+1))
	w.expect("PUT", path+"/tags/blue", nil, nil, 201)
	w.expect("GET", path+"/tags", nil, nil, 200, `"tags":["blue"]`)
	w.expect("GET", "/network/v2.0/networks?tags-any=blue,green", nil, nil, 200, id)
	if _, out := w.call("GET", "/network/v2.0/networks?not-tags=blue", nil, nil); strings.Contains(fmt.Sprint(out), id) {
		t.Errorf("not-tags=blue still lists %s", id)
	}
	w.expect("DELETE", path+"/tags/blue", nil, nil, 204)
	w.expect("GET", path+"/tags/blue", nil, nil, 404, "TagNotFound")
}

func TestPortAttributesComeBackAsSent(t *testing.T) {
	w := newWire(t)
	net := w.sim.Networks()[0].ID
	out := w.expect("POST", "/network/v2.0/ports", map[string]any{"port": map[string]any{"network_id": net, "name": "vip",
		"allowed_address_pairs": []any{map[string]any{"ip_address": "10.0.9.9", "mac_address": "fa:16:3e:00:00:01"}}}}, nil, 201,
		`"allowed_address_pairs":[{"ip_address":"10.0.9.9","mac_address":"fa:16:3e:00:00:01"}]`, `"port_security_enabled":true`)
	id := out["port"].(map[string]any)["id"].(string)
	w.expect("PUT", "/network/v2.0/ports/"+id, map[string]any{"port": map[string]any{"port_security_enabled": false}}, nil, 409,
		"PortSecurityAndIPRequiredForSecurityGroups")
	w.expect("PUT", "/network/v2.0/ports/"+id, map[string]any{"port": map[string]any{"port_security_enabled": false,
		"security_groups": []string{}, "allowed_address_pairs": []any{}}}, nil, 200, `"port_security_enabled":false`, `"security_groups":[]`)
	w.expect("PUT", "/network/v2.0/ports/"+id, map[string]any{"port": map[string]any{"fixed_ips": []any{}}}, nil, 400,
		"Cannot update read-only attribute fixed_ips")
}

func TestGlancePagination(t *testing.T) {
	w := newWire(t)
	w.expect("GET", "/image", nil, nil, 300, `"CURRENT"`, "/image/v2/")
	out := w.expect("GET", "/image/v2/images?limit=3", nil, nil, 200, `"next":"/v2/images?`) // of the four seeded
	next := "/image" + out["next"].(string)
	out = w.expect("GET", next, nil, nil, 200)
	if images := out["images"].([]any); len(images) != 1 || out["next"] != nil {
		t.Errorf("second page: %v", out)
	}
	w.expect("GET", "/image/v2/images?visibility=private", nil, nil, 200, `"images":[]`)
	w.expect("GET", "/image/v2/images?name=in:cirros,nothing", nil, nil, 200, `"name":"cirros"`)
}

func TestNovaSubresources(t *testing.T) {
	w := newWire(t)
	out := w.expect("POST", "/compute/v2.1/servers", map[string]any{"server": map[string]any{"name": "s", "imageRef": w.sim.Images()[0].ID,
		"flavorRef": "2", "networks": "none", "metadata": map[string]string{"a": "1"}}}, nil, 202)
	srv := "/compute/v2.1/servers/" + out["server"].(map[string]any)["id"].(string)
	mv := map[string]string{"OpenStack-API-Version": "compute 2.26"}
	w.expect("PUT", srv+"/tags/blue", nil, mv, 201)
	w.expect("PUT", srv+"/tags/blue", nil, mv, 204)
	w.expect("GET", srv+"/tags", nil, mv, 200, `"tags":["blue"]`)
	w.expect("GET", srv+"/tags", nil, nil, 404) // before 2.26 the route does not exist
	w.expect("PUT", srv+"/metadata/b", map[string]any{"meta": map[string]string{"b": "2"}}, nil, 200, `"meta":{"b":"2"}`)
	w.expect("PUT", srv+"/metadata/b", map[string]any{"meta": map[string]string{"c": "2"}}, nil, 400, "Request body and URI mismatch")
	w.expect("GET", srv+"/metadata", nil, nil, 200, `"metadata":{"a":"1","b":"2"}`)
	w.expect("DELETE", srv+"/metadata/a", nil, nil, 204)
	w.expect("GET", srv+"/metadata/a", nil, nil, 404, "Metadata item was not found")
	w.expect("GET", srv+"/os-interface", nil, nil, 200, `"interfaceAttachments":[]`)
	w.expect("GET", srv+"/os-volume_attachments", nil, nil, 200, `"volumeAttachments":[]`)
}

func TestServerNamingComesBackAsSent(t *testing.T) {
	w := newWire(t)
	mv := map[string]string{"OpenStack-API-Version": "compute 2.90"}
	out := w.expect("POST", "/compute/v2.1/servers", map[string]any{"server": map[string]any{"name": "Web Server_1", "imageRef": w.sim.Images()[0].ID,
		"flavorRef": "2", "networks": "none", "description": "front end", "accessIPv4": "192.0.2.7"}}, mv, 202)
	srv := "/compute/v2.1/servers/" + out["server"].(map[string]any)["id"].(string)
	w.expect("GET", srv, nil, mv, 200, `"description":"front end"`, `"accessIPv4":"192.0.2.7"`, `"OS-EXT-SRV-ATTR:hostname":"web-server-1"`)
	w.expect("PUT", srv, map[string]any{"server": map[string]any{"name": "web", "hostname": "web-1"}}, mv, 200,
		`"name":"web"`, `"OS-EXT-SRV-ATTR:hostname":"web-1"`, `"description":"front end"`)
	w.expect("PUT", srv, map[string]any{"server": map[string]any{"hostname": "web-2"}}, nil, 400, "('hostname' was unexpected)")
	w.expect("POST", "/compute/v2.1/servers", map[string]any{"server": map[string]any{"name": "p", "imageRef": w.sim.Images()[0].ID,
		"flavorRef": "2", "networks": "none", "personality": []any{map[string]string{"path": "/etc/motd", "contents": "aGk="}}}}, nil, 400, "personality")
}

func TestVolumeAttachDetach(t *testing.T) {
	w := newWire(t)
	out := w.expect("POST", "/compute/v2.1/servers", map[string]any{"server": map[string]any{"name": "s", "imageRef": w.sim.Images()[0].ID,
		"flavorRef": "2", "networks": "none"}}, nil, 202)
	srv := "/compute/v2.1/servers/" + out["server"].(map[string]any)["id"].(string)
	vols := "/volume/v3/" + openstacktest.ProjectID + "/volumes"
	vol := w.expect("POST", vols, map[string]any{"volume": map[string]any{"size": 2, "name": "data"}}, nil, 202, `"status":"creating"`)["volume"].(map[string]any)["id"].(string)
	waitFor(t, "the volume to become available", func() bool { return w.sim.Volumes()[0].Status == "available" })
	w.expect("POST", srv+"/os-volume_attachments", map[string]any{"volumeAttachment": map[string]any{"volumeId": vol}}, nil, 200, `"device":"/dev/vdb"`)
	w.expect("GET", vols+"/"+vol, nil, nil, 200, `"status":"in-use"`, `"device":"/dev/vdb"`)
	w.expect("POST", srv+"/os-volume_attachments", map[string]any{"volumeAttachment": map[string]any{"volumeId": vol}}, nil, 400, "must be available")
	w.expect("DELETE", vols+"/"+vol, nil, nil, 400, "Invalid volume")
	w.expect("DELETE", srv+"/os-volume_attachments/"+vol, nil, nil, 202)
	w.expect("GET", vols+"/"+vol, nil, nil, 200, `"status":"available"`, `"attachments":[]`)
	w.expect("POST", vols, map[string]any{"volume": map[string]any{"size": 1, "snapshot_id": "x"}}, nil, 400, "not from snapshots")
}
