package probe

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/encryption"
	"github.com/slipway-dev/slipway/pkg/inventory"
	"github.com/slipway-dev/slipway/pkg/ssh/sshtest"
)

// TestEncryptionState: the probe reports each control plane's file by hash and whether its API
// server reads it, takes the leader's file as the truth, and says what it still needs, by key
// names; workers are not asked, and no key shows in what it reports.
func TestEncryptionState(t *testing.T) {
	c := &v1beta1.Cluster{Name: "unit"}
	for i := range 3 {
		c.ControlPlane.Hosts = append(c.ControlPlane.Hosts, v1beta1.Host{PublicAddress: fmt.Sprintf("10.0.0.%d", i+1), Hostname: fmt.Sprintf("cp-%d", i+1), IsLeader: i == 1})
	}
	c.StaticWorkers.Hosts = []v1beta1.Host{{PublicAddress: "10.0.0.9", Hostname: "w-1"}}
	nodes := inventory.Nodes(c)
	fleet := &sshtest.Fleet{}
	k1, _ := encryption.NewKey("key-1")
	k2, _ := encryption.NewKey("key-2")
	old, _ := encryption.Render(encryption.Config{Keys: []encryption.Key{k1}, Rewritten: "key-1"})
	rotating, _ := encryption.Render(encryption.Config{Keys: []encryption.Key{k1, k2}, Rewritten: "key-1"})
	set := func(name string, data []byte, state string) {
		for _, n := range nodes {
			if n.Name == name {
				h := fleet.Get(n.Target.String())
				h.On(`^script encryption-state$`, sshtest.Response{Stdout: state})
				if data != nil {
					h.SetFile(encryption.File, sshtest.File{Data: data, Mode: 0o600})
				}
			}
		}
	}
	set("cp-1", old, "file\nconfigured\n")
	set("cp-2", rotating, "file\nconfigured\n") // the leader: a rotation killed after adding key-2
	set("cp-3", nil, "configured\n")

	st, err := encryptionState(context.Background(), Input{Nodes: nodes, SSH: fleet}, nodes)
	if err != nil {
		t.Fatal(err)
	}
	if st.Source != "cp-2" || st.Files["cp-1"] != encryption.Hash(old) || st.Files["cp-2"] != encryption.Hash(rotating) || st.Files["cp-3"] != "" {
		t.Errorf("source %s, files %v", st.Source, st.Files)
	}
	if strings.Join(st.Configured, ",") != "cp-2,cp-1,cp-3" {
		t.Errorf("configured %v", st.Configured)
	}
	if !strings.Contains(st.Pending, "make key-2 encrypt") || !strings.Contains(st.Holds, "aescbc key-1, key-2") {
		t.Errorf("holds %q, pending %q", st.Holds, st.Pending)
	}
	for _, k := range []encryption.Key{k1, k2} {
		if strings.Contains(fmt.Sprintf("%+v", st), base64.StdEncoding.EncodeToString(k.Secret)) {
			t.Errorf("the probe reports %s", k.Name)
		}
	}
	if calls := fleet.Get(nodes[3].Target.String()).Calls(); nodes[3].Name != "w-1" || len(calls) != 0 {
		t.Errorf("a worker was asked: %v", calls)
	}

	// A leader's file that slipway did not write stops the probe, without quoting it.
	set("cp-2", []byte("secret: "+base64.StdEncoding.EncodeToString(k2.Secret)+"\n"), "file\n")
	_, err = encryptionState(context.Background(), Input{Nodes: nodes, SSH: fleet}, nodes)
	if err == nil || strings.Contains(err.Error(), base64.StdEncoding.EncodeToString(k2.Secret)) {
		t.Errorf("err = %v", err)
	}
}
