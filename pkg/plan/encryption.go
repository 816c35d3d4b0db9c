package plan

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// encryption makes the cluster's API servers encrypt Secrets at rest when the manifest says so
// (encryption.enabled), in three steps that each leave the cluster serving: the encryption
// configuration put on every control plane (a new one reads the new key but does not write
// with it yet) and kubeadm's ClusterConfiguration updated, then each control plane's API
// server restarted with it, one at a time, then the key made to encrypt and every Secret
// rewritten. A rotation (--rotate-encryption-key) or one of these left half-done by a killed
// run is carried on from what the control planes' files hold. A cluster created in this run
// gets its configuration with kubeadm init, and joining control planes their copy before they
// join. Turning encryption off is refused: the API servers would no longer read the Secrets
// stored encrypted.
func (b *builder) encryption() error {
	e := b.o.Encryption
	if !b.d.Encryption {
		if len(e.Files) > 0 || len(e.Configured) > 0 {
			on := slices.Sorted(maps.Keys(e.Files))
			return &Error{Reason: fmt.Sprintf("encryption.enabled: Invalid value: false: the control planes %s hold an encryption configuration and the API servers of %s read Secrets with it; "+
				"turning encryption off would leave the Secrets stored encrypted unreadable, and slipway does not do it: set encryption.enabled: true again",
				orNone(strings.Join(on, ", ")), orNone(strings.Join(e.Configured, ", ")))}
		}
		if b.d.RotateEncryptionKey {
			return &Error{Reason: "encryption.enabled: Required value: --rotate-encryption-key rotates the key that encrypts Secrets at rest, and the manifest does not enable that encryption"}
		}
		return nil
	}
	if !b.o.Cluster.Exists {
		return nil // kubeadm init writes the configuration, and the joins copy it
	}
	var restart []DesiredHost
	missing := false
	for _, dh := range b.d.Hosts {
		if dh.Role != ControlPlane {
			continue
		}
		joined := b.hosts[dh.Name].Joined
		// A control plane that joins in this run reads kubeadm's ClusterConfiguration, which
		// names the encryption configuration once any API server reads it.
		if (joined && !slices.Contains(e.Configured, dh.Name)) || (!joined && len(e.Configured) == 0) {
			restart = append(restart, dh)
		}
		if joined && (e.Files[dh.Name] == "" || e.Files[dh.Name] != e.Files[e.Source]) {
			missing = true
		}
	}
	switch {
	case e.Source == "":
		b.add(StepEncryptionConfig, "", "encryption.enabled: no control plane holds an encryption configuration: make key-1 on the leader, read but not yet written with, copy it to every control plane, add it to kubeadm's ClusterConfiguration", false)
	case missing || len(restart) > 0:
		b.add(StepEncryptionConfig, "", fmt.Sprintf("encryption.enabled: copy %s's encryption configuration (%s) to every control plane that lacks it, add it to kubeadm's ClusterConfiguration", e.Source, e.Holds), false)
	}
	for _, dh := range upgradeOrder(restart) {
		b.add(StepEncryptionServer, dh.Name, "encryption.enabled: the API server does not read the encryption configuration: restart it with it, then wait until it is ready and uses it", false)
	}
	switch {
	case b.d.RotateEncryptionKey && e.Source == "":
		return &Error{Reason: "--rotate-encryption-key: no control plane holds an encryption configuration yet; run apply without it first, which enables encryption"}
	case b.d.RotateEncryptionKey && e.Pending != "":
		b.add(StepRotateKey, "", "--rotate-encryption-key: "+e.Pending+"; this finishes the rotation under way and does not start another", false)
	case b.d.RotateEncryptionKey:
		b.add(StepRotateKey, "", fmt.Sprintf("--rotate-encryption-key (%s): add a new key second on every control plane and wait until every API server reads it, make it encrypt and wait, rewrite every Secret, drop the old key and wait", e.Holds), false)
	case e.Pending != "":
		b.add(StepEncryptSecrets, "", e.Pending, false)
	case e.Source == "":
		b.add(StepEncryptSecrets, "", "encryption.enabled: once every API server reads key-1, make it encrypt and rewrite every Secret, so that those stored before are encrypted too", false)
	}
	return nil
}
