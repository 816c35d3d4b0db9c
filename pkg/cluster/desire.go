package cluster

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/slipway-dev/slipway/pkg/addons"
	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/applied"
	"github.com/slipway-dev/slipway/pkg/bootstrap"
	"github.com/slipway-dev/slipway/pkg/ccmdeploy"
	"github.com/slipway-dev/slipway/pkg/inventory"
	"github.com/slipway-dev/slipway/pkg/kube"
	"github.com/slipway-dev/slipway/pkg/kubeadm"
	"github.com/slipway-dev/slipway/pkg/mcdeploy"
	"github.com/slipway-dev/slipway/pkg/phases"
	"github.com/slipway-dev/slipway/pkg/plan"
	"github.com/slipway-dev/slipway/pkg/pools"
	"github.com/slipway-dev/slipway/pkg/probe"
	"github.com/slipway-dev/slipway/pkg/scripts"
	"github.com/slipway-dev/slipway/pkg/workers"
)

// Desired is the cluster as the manifest wants it for one run: what planning compares, and
// what the phases install, rendered once so that they install exactly what was compared.
type Desired struct {
	Plan     plan.Desired
	Rendered phases.Rendered
}

// Desire renders what the manifest c asks for with the inputs in (ReadInputs), given what the
// probe saw: each host's prerequisites script depends on its OS, and an existing
// MachineDeployment keeps its kubelet version unless upgradeMDs. It reads nothing else and
// changes nothing.
func Desire(c *v1beta1.Cluster, in *Inputs, o *probe.Observed, upgradeMDs bool) (*Desired, error) {
	d := &Desired{
		Plan:     plan.Desired{Version: strings.TrimPrefix(c.Versions.Kubernetes, "v"), Addons: map[string]string{}, Encryption: c.Encryption.Enabled},
		Rendered: phases.Rendered{PrereqScripts: map[string]string{}, PrereqRecords: map[string]string{}},
	}
	cas := in.RegistryCAs
	prereq, err := prereqRenderer(c, cas)
	if err != nil {
		return nil, err
	}
	recorded, recordedSnapshots := map[string]string{}, map[string]string{}
	for _, h := range o.State.Hosts {
		recorded[h.Name], recordedSnapshots[h.Name] = h.PrereqHash, h.SnapshotsHash
	}
	for _, n := range o.Nodes {
		script, err := prereq(o.Facts[n.Name])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", n.Name, err)
		}
		// Salted with the host's own salt, so that an unchanged script matches its record.
		record, err := applied.HostRecord(applied.HostRecordSalt(recorded[n.Name]), []byte(script))
		if err != nil {
			return nil, err
		}
		d.Rendered.PrereqScripts[n.Name] = script
		d.Rendered.PrereqRecords[n.Name] = record
		snapshots, err := snapshotsHash(c, n, in.S3, applied.HostRecordSalt(recordedSnapshots[n.Name]), d)
		if err != nil {
			return nil, err
		}
		d.Plan.Hosts = append(d.Plan.Hosts, plan.DesiredHost{
			Name: n.Name, Address: n.Target.Address, Role: n.Role, Leader: n.Host.IsLeader, UpgradeIndex: n.Host.UpgradeIndex,
			PrereqHash: record, SnapshotsHash: snapshots,
		})
	}
	cni, err := addons.Render(c)
	if err != nil {
		return nil, err
	}
	if len(cni) > 0 {
		d.Rendered.CNI = cni
		d.Plan.Addons["cni"] = applied.Hash(cni)
		d.Plan.CNI = addons.CNI(c)
	}
	if c.MachineController.Deploy != nil && *c.MachineController.Deploy {
		s := bootstrap.SettingsFor(c, cas)
		if ns, sel, ok := addons.CNIPods(c); ok {
			s.CNIPods = &bootstrap.PodSelector{Namespace: ns, Selector: sel}
		}
		settings, err := s.Marshal()
		if err != nil {
			return nil, err
		}
		creds, err := bootstrap.Credentials(s)
		if err != nil {
			return nil, err
		}
		// The hash covers the credentials: the settings hold them too.
		h, err := machineControllerHash(c, in.OpenStack, settings)
		if err != nil {
			return nil, err
		}
		d.Rendered.MachineControllerHash, d.Rendered.NodeSettings, d.Rendered.NodeCredentials = h, settings, creds
		d.Plan.Addons["machine-controller"] = h
	}
	if ccmdeploy.Wanted(c) {
		if err := cloudController(c, in.OpenStack, d); err != nil {
			return nil, err
		}
	}
	d.Plan.ImageArchive = in.ImageArchive
	mds, err := workers.MachineDeployments(c)
	if err != nil {
		return nil, err
	}
	changed, undeclared := workers.PinKubelet(mds, o.State.Cluster.MachineDeploymentKubelets, c.Versions.Kubernetes, upgradeMDs)
	for _, md := range mds {
		d.Plan.Pools = append(d.Plan.Pools, md.Name)
		if v1alpha1.Autoscaled(md) {
			if d.Plan.Autoscaled == nil {
				d.Plan.Autoscaled = map[string]int32{}
			}
			d.Plan.Autoscaled[md.Name] = pools.Replicas(md)
		}
	}
	workers.LeaveReplicas(mds, func(name string) bool { _, ok := o.State.Cluster.Pools[name]; return ok })
	for _, u := range changed {
		d.Plan.KubeletUpgrades = append(d.Plan.KubeletUpgrades, fmt.Sprintf("%s %s → %s", u.Name, u.From, u.To))
	}
	if len(mds) > 0 || len(undeclared) > 0 {
		out, err := workers.Marshal(mds)
		if err != nil {
			return nil, err
		}
		// MachineDeployments the manifest does not declare get only their kubelet version
		// applied, as a partial object under a field manager of its own.
		bumps := workers.KubeletBumps(undeclared, c.Versions.Kubernetes)
		d.Rendered.MachineDeployments, d.Rendered.KubeletBumps = out, bumps
		d.Plan.Addons["machine-deployments"] = applied.Hash(out, bumps)
		if d.Plan.PoolObjects, err = poolObjects(out); err != nil {
			return nil, err
		}
	}
	if err := desireUserAddons(c, in.Addons, d); err != nil {
		return nil, err
	}
	return d, nil
}

// poolObjects decodes the rendered MachineDeployments into the JSON objects, by name, that the
// plan compares with the live ones: what is applied is what is compared.
func poolObjects(rendered []byte) (map[string]json.RawMessage, error) {
	objs, err := kube.Decode(rendered)
	if err != nil {
		return nil, fmt.Errorf("machine-deployments manifests: %w", err)
	}
	out := make(map[string]json.RawMessage, len(objs))
	for _, o := range objs {
		raw, err := json.Marshal(o.Object)
		if err != nil {
			return nil, fmt.Errorf("MachineDeployment %s: %w", o.GetName(), err)
		}
		out[o.GetName()] = raw
	}
	return out, nil
}

// snapshotsHash renders, for a control plane, the set-up of the scheduled etcd snapshots
// (etcd.snapshots) into d.Rendered, with the removal of a timer for when they are not wanted, and
// returns the record the host should hold ("" for none): an applied.HostRecord, salted with salt (the
// host's own, or "" for a new one), as the set-up holds the S3 access key.
func snapshotsHash(c *v1beta1.Cluster, n *inventory.Node, s3 *scripts.S3Credentials, salt string, d *Desired) (string, error) {
	if n.Role != plan.ControlPlane {
		return "", nil
	}
	var p *scripts.SnapshotParams
	if s := c.Etcd.Snapshots; s != nil {
		image, err := kubeadm.EtcdImage(c)
		if err != nil {
			return "", err
		}
		p = &scripts.SnapshotParams{Node: n.Name, Image: image, Snapshots: *s, S3: s3}
	}
	script, err := scripts.EtcdSnapshots(p)
	if err != nil {
		return "", fmt.Errorf("%s: %w", n.Name, err)
	}
	if d.Rendered.SnapshotScripts == nil {
		d.Rendered.SnapshotScripts, d.Rendered.SnapshotRecords = map[string]string{}, map[string]string{}
	}
	record := ""
	if p != nil {
		if record, err = applied.HostRecord(salt, []byte(script)); err != nil {
			return "", err
		}
	}
	d.Rendered.SnapshotScripts[n.Name], d.Rendered.SnapshotRecords[n.Name] = script, record
	return record, nil
}

// prereqRenderer returns the renderer of a host's prerequisites script. The scripts may hold
// registry credentials: never log them.
func prereqRenderer(c *v1beta1.Cluster, cas map[string][]byte) (func(scripts.Facts) (string, error), error) {
	sandbox, err := kubeadm.PauseImage(c)
	if err != nil {
		return nil, err
	}
	return func(f scripts.Facts) (string, error) {
		return scripts.Prerequisites(f.OS, scripts.PrereqParams{
			Cluster: c, SandboxImage: sandbox, RegistryCAs: cas, UpstreamDNS: c.ClusterNetwork.UpstreamDNS,
		})
	}, nil
}

// machineControllerHash is what the plan compares for the machine-controller: its rendered
// manifests (without the generated webhook CA), the credentials and the node settings (which
// hold registry credentials), hashed.
func machineControllerHash(c *v1beta1.Cluster, creds map[string]string, settings []byte) (string, error) {
	objs, err := mcdeploy.Render(c, nil)
	if err != nil {
		return "", err
	}
	var parts [][]byte
	for _, o := range objs {
		b, err := o.MarshalJSON()
		if err != nil {
			return "", err
		}
		parts = append(parts, b)
	}
	for _, k := range slices.Sorted(maps.Keys(creds)) {
		parts = append(parts, []byte(k+"="+creds[k]))
	}
	parts = append(parts, settings)
	return applied.Hash(parts...), nil
}

// cloudController renders the OpenStack cloud-controller-manager, with its cloud.conf from the
// same credentials as the machine-controller's, and the hash the plan compares. The plan carries
// only the hash: the credentials stay in the rendered Secret, which no output shows.
func cloudController(c *v1beta1.Cluster, creds map[string]string, d *Desired) error {
	objs, err := ccmdeploy.Render(c, creds)
	if err != nil {
		return err
	}
	var parts [][]byte
	for _, o := range objs {
		b, err := o.MarshalJSON()
		if err != nil {
			return err
		}
		parts = append(parts, b)
	}
	d.Rendered.CloudController = objs
	d.Rendered.CloudControllerHash = applied.Hash(parts...)
	d.Rendered.CloudControllerSecrets = ccmdeploy.Secrets(creds)
	d.Plan.Addons["cloud-controller-manager"] = d.Rendered.CloudControllerHash
	return nil
}
