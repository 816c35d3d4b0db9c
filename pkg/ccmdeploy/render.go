// Package ccmdeploy renders the installation of the OpenStack cloud-controller-manager into a
// cluster whose manifest says cloudProvider.openstack with external: true: its ServiceAccount,
// RBAC and DaemonSet (manifests/openstack-ccm) with the image and cluster name filled in, and the
// Secret holding its cloud.conf, built from the same OS_* credentials as the machine-controller's
// (mcdeploy.Credentials). It is pure; the apply step applies the result. The Secret holds the
// credentials: nothing that renders or applies it may log it.
package ccmdeploy

import (
	"encoding/base64"
	"fmt"
	"io/fs"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/slipway-dev/slipway/manifests"
	"github.com/slipway-dev/slipway/pkg/addons"
	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/kube"
)

// Names of the objects this package configures, and where the DaemonSet mounts the Secret.
const (
	Namespace    = "kube-system"
	DaemonSet    = "openstack-cloud-controller-manager"
	ConfigSecret = "openstack-cloud-controller-manager-config"
	ConfigDir    = "/etc/kubernetes/cloud"
	ConfigFile   = "cloud.conf"
	CAFile       = "ca.crt"
)

// Wanted reports whether the manifest asks for the OpenStack cloud-controller-manager.
func Wanted(c *v1beta1.Cluster) bool {
	return c.CloudProvider.OpenStack != nil && c.CloudProvider.External
}

// Image is the cloud-controller-manager image the cluster runs: the one `make image` builds,
// under upstream's reference, rewritten by registryConfiguration.overwriteRegistry like every
// system image.
func Image(c *v1beta1.Cluster) (string, error) {
	return c.RegistryConfiguration.Rewrite(addons.OpenStackCCMImage)
}

// Render returns the objects to apply, the Secret first so that the DaemonSet's pods find it.
// creds are what mcdeploy.Credentials returns.
func Render(c *v1beta1.Cluster, creds map[string]string) ([]*unstructured.Unstructured, error) {
	data, err := CloudConfig(creds)
	if err != nil {
		return nil, fmt.Errorf("the cloud-controller-manager's cloud.conf: %w", err)
	}
	objs := []*unstructured.Unstructured{secret(data)}
	files, err := fs.Glob(manifests.FS, "openstack-ccm/*.yaml")
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	for _, f := range files {
		raw, err := manifests.FS.ReadFile(f)
		if err != nil {
			return nil, err
		}
		decoded, err := kube.Decode(raw)
		if err != nil {
			return nil, fmt.Errorf("manifests/%s: %w", f, err)
		}
		objs = append(objs, decoded...)
	}
	for _, o := range objs {
		if o.GetKind() == "DaemonSet" && o.GetName() == DaemonSet {
			if err := configure(o, c); err != nil {
				return nil, err
			}
		}
	}
	return objs, nil
}

// configure sets the image and the flags that depend on the cluster.
func configure(o *unstructured.Unstructured, c *v1beta1.Cluster) error {
	containers, _, err := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
	if err != nil || len(containers) == 0 {
		return fmt.Errorf("the cloud-controller-manager DaemonSet has no containers: %v", err)
	}
	img, err := Image(c)
	if err != nil {
		return err
	}
	ctr := containers[0].(map[string]any)
	ctr["image"] = img
	args, _, _ := unstructured.NestedStringSlice(ctr, "args")
	// The cluster's name goes into the names of the load balancers it creates for Services.
	args = append(args, "--cluster-name="+c.Name)
	anyArgs := make([]any, len(args))
	for i, a := range args {
		anyArgs[i] = a
	}
	ctr["args"] = anyArgs
	containers[0] = ctr
	return unstructured.SetNestedSlice(o.Object, containers, "spec", "template", "spec", "containers")
}

func secret(data map[string][]byte) *unstructured.Unstructured {
	d := map[string]any{}
	for k, v := range data {
		d[k] = base64.StdEncoding.EncodeToString(v)
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
		"metadata": map[string]any{"name": ConfigSecret, "namespace": Namespace,
			"labels": map[string]any{"app.kubernetes.io/name": DaemonSet, "app.kubernetes.io/managed-by": "slipway"}},
		"data": d,
	}}
}
