package phases

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/slipway-dev/slipway/pkg/encryption"
	"github.com/slipway-dev/slipway/pkg/ssh/sshtest"
)

// TestInitWithEncryption: with encryption.enabled, init first puts a new encryption
// configuration on the leader, root-only, in which key-1 encrypts from the start; the key is
// registered for hiding and appears on no command line and in no progress line, and the init
// configuration names the file.
func TestInitWithEncryption(t *testing.T) {
	r, h, secrets := kubeadmRun(t)
	r.cfg.Manifest.Encryption.Enabled = true
	var log bytes.Buffer
	r.cfg.Log = &log
	// What the leader's kernel gives (the fake host runs no script).
	fromLeader := bytes.Repeat([]byte{0xa5, 0x3c}, encryption.KeySize/2)
	newKey := encryption.Dir + "/.new-key-1"
	h.SetFile(newKey, sshtest.File{Data: fromLeader, Mode: 0o600, Owner: "root"})
	if err := initCluster(context.Background(), noAPI{r}, "cp"); err != nil {
		t.Fatal(err)
	}
	f, ok := h.File(encryption.File)
	if !ok || f.Mode != 0o600 || f.Owner != "root:root" {
		t.Fatalf("%s uploaded: %v, mode %o, owner %q", encryption.File, ok, f.Mode, f.Owner)
	}
	c, err := encryption.Parse(f.Data)
	if err != nil {
		t.Fatal(err)
	}
	if a, _ := encryption.Next(c); a != encryption.Done || c.Keys[0].Name != "key-1" {
		t.Errorf("a new cluster starts with %s, want key-1 encrypting", c.Describe())
	}
	if !bytes.Equal(c.Keys[0].Secret, fromLeader) {
		t.Error("key-1 is not the one made on the leader")
	}
	key := base64.StdEncoding.EncodeToString(c.Keys[0].Secret)
	if secrets.Redact("x"+key+"x") != "x[redacted]x" {
		t.Error("the key is not registered for hiding")
	}
	cmds := h.Commands()
	upload, init := -1, -1
	for i, call := range h.Calls() {
		if strings.Contains(call.Command+call.Script+strings.Join(call.Env, " "), key) {
			t.Errorf("the key is in %s", call.Command)
		}
		switch {
		case call.Command == "upload "+encryption.File:
			upload = i
		case strings.HasPrefix(call.Command, "kubeadm init"):
			init = i
		}
	}
	if upload < 0 || init < 0 || upload > init {
		t.Errorf("the encryption configuration is not uploaded before kubeadm init:\n%s", strings.Join(cmds, "\n"))
	}
	if !slices.Contains(cmds, "install -d -m 0700 -o root -g root "+encryption.Dir) || !slices.Contains(cmds, "rm -f "+newKey) {
		t.Errorf("the directory is not made root-only, or the new key's file not removed:\n%s", strings.Join(cmds, "\n"))
	}
	cfg, _ := h.File(initConfig)
	if !strings.Contains(string(cfg.Data), "value: "+encryption.File) {
		t.Errorf("the init configuration does not name %s", encryption.File)
	}
	if strings.Contains(log.String(), key) || !strings.Contains(log.String(), "made key-1") {
		t.Errorf("progress:\n%s", log.String())
	}
}

// TestInterruptedInitKeepsItsKey: an init that did not finish left the file; the next one
// keeps it (the API server may have stored Secrets with it already).
func TestInterruptedInitKeepsItsKey(t *testing.T) {
	r, h, secrets := kubeadmRun(t)
	r.cfg.Manifest.Encryption.Enabled = true
	k, err := encryption.NewKey(encryption.FirstKey)
	if err != nil {
		t.Fatal(err)
	}
	c := encryption.Fresh(k)
	data, err := encryption.Render(c)
	if err != nil {
		t.Fatal(err)
	}
	h.SetFile(encryption.File, sshtest.File{Data: data, Mode: 0o600, Owner: "root:root"})
	h.On(`^script encryption-state$`, sshtest.Response{Stdout: "file\n"})
	if err := initCluster(context.Background(), noAPI{r}, "cp"); err != nil {
		t.Fatal(err)
	}
	if f, _ := h.File(encryption.File); !bytes.Equal(f.Data, data) {
		t.Error("init replaced the encryption configuration an interrupted init left")
	}
	if secrets.Redact(base64.StdEncoding.EncodeToString(c.Keys[0].Secret)) != "[redacted]" {
		t.Error("the key read back is not registered for hiding")
	}
}

// TestInitWithoutEncryption leaves no file.
func TestInitWithoutEncryption(t *testing.T) {
	r, h, _ := kubeadmRun(t)
	if err := initCluster(context.Background(), noAPI{r}, "cp"); err != nil {
		t.Fatal(err)
	}
	if _, ok := h.File(encryption.File); ok {
		t.Error("an encryption configuration was written although the manifest does not enable it")
	}
	for _, c := range h.Commands() {
		if strings.Contains(c, "encryption") {
			t.Errorf("ran %s", c)
		}
	}
}

// TestFinishInitStagesAMissingKey: an interrupted init whose leader has no encryption
// configuration ran its API server without encryption, which may have stored Secrets in plain
// text; finishing it stages key-1 (read, not yet written with), for the next apply to restart
// the API server with it and rewrite every Secret.
func TestFinishInitStagesAMissingKey(t *testing.T) {
	r, h, _ := kubeadmRun(t)
	r.cfg.Manifest.Encryption.Enabled = true
	h.SetFile(encryption.Dir+"/.new-key-1", sshtest.File{Data: bytes.Repeat([]byte{7}, encryption.KeySize)})
	if err := finishInit(context.Background(), noAPI{r}, "cp"); !errors.Is(err, errNoAPI) {
		t.Fatalf("finishInit = %v, want it to reach the node metadata step", err)
	}
	f, ok := h.File(encryption.File)
	if !ok {
		t.Fatal("no encryption configuration written")
	}
	c, err := encryption.Parse(f.Data)
	if err != nil {
		t.Fatal(err)
	}
	if a, _ := encryption.Next(c); !c.IdentityFirst || a != encryption.Promote {
		t.Errorf("finishing an init wrote %s, want key-1 staged", c.Describe())
	}
}
