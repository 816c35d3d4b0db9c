// Package mcdeploy renders the installation of the machine-controller into a cluster: the
// cluster.k8s.io CRDs and the controller's manifests with the image, flags, OpenStack
// credentials Secret and webhook CA filled in. It is pure but for reading the CA file that
// OS_CACERT names; the apply step applies the result. The credentials Secret is the
// controller's whole configuration of its cloud (see SECURITY.md).
package mcdeploy

import (
	"encoding/base64"
	"fmt"
	"io/fs"
	"path"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/slipway-dev/slipway/manifests"
	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/kube"
)

// Names of the objects this package configures.
const (
	Namespace         = "kube-system"
	Deployment        = "machine-controller"
	CredentialsSecret = "machine-controller-credentials"
	WebhookTLSSecret  = "machine-controller-webhook-tls"
	WebhookService    = "machine-controller-webhook"
)

// Render returns the objects to apply, CRDs first. caBundle is the PEM CA of the webhook's
// serving certificate.
func Render(c *v1beta1.Cluster, caBundle []byte) ([]*unstructured.Unstructured, error) {
	var objs []*unstructured.Unstructured
	for _, dir := range []string{"crds", "machine-controller"} {
		files, err := fs.Glob(manifests.FS, path.Join(dir, "*.yaml"))
		if err != nil {
			return nil, err
		}
		sort.Strings(files)
		for _, f := range files {
			data, err := manifests.FS.ReadFile(f)
			if err != nil {
				return nil, err
			}
			decoded, err := kube.Decode(data)
			if err != nil {
				return nil, fmt.Errorf("manifests/%s: %w", f, err)
			}
			objs = append(objs, decoded...)
		}
	}
	for _, o := range objs {
		switch o.GetKind() {
		case "Deployment":
			if o.GetName() == Deployment {
				if err := configureDeployment(o, c); err != nil {
					return nil, err
				}
			}
		case "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration":
			if err := setCABundle(o, caBundle); err != nil {
				return nil, err
			}
		}
	}
	return objs, nil
}

// configureDeployment sets the image, the cluster's name, and the credentials the OpenStack
// provider reads from OS_* variables. What pool machines are set up with is not a flag: it is
// the node settings Secret (bootstrap.SettingsSecret), which the controller reads per Machine.
func configureDeployment(o *unstructured.Unstructured, c *v1beta1.Cluster) error {
	containers, _, err := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
	if err != nil || len(containers) == 0 {
		return fmt.Errorf("the machine-controller Deployment has no containers: %v", err)
	}
	ctr := containers[0].(map[string]any)
	ctr["image"] = c.MachineController.Image
	args, _, _ := unstructured.NestedStringSlice(ctr, "args")
	args = append(args, "--cluster-name="+c.Name)
	anyArgs := make([]any, len(args))
	for i, a := range args {
		anyArgs[i] = a
	}
	ctr["args"] = anyArgs
	ctr["envFrom"] = []any{map[string]any{"secretRef": map[string]any{"name": CredentialsSecret, "optional": true}}}
	containers[0] = ctr
	if c.MachineController.ImageArchive != "" {
		// apply imports the image archive into the control planes' containerd only.
		sel := map[string]string{"node-role.kubernetes.io/control-plane": ""}
		if err := unstructured.SetNestedStringMap(o.Object, sel, "spec", "template", "spec", "nodeSelector"); err != nil {
			return err
		}
	}
	return unstructured.SetNestedSlice(o.Object, containers, "spec", "template", "spec", "containers")
}

func setCABundle(o *unstructured.Unstructured, ca []byte) error {
	hooks, _, err := unstructured.NestedSlice(o.Object, "webhooks")
	if err != nil {
		return err
	}
	for i, h := range hooks {
		m := h.(map[string]any)
		cc, _ := m["clientConfig"].(map[string]any)
		if cc == nil {
			return fmt.Errorf("%s %s: webhook without clientConfig", o.GetKind(), o.GetName())
		}
		cc["caBundle"] = base64.StdEncoding.EncodeToString(ca)
		hooks[i] = m
	}
	return unstructured.SetNestedSlice(o.Object, hooks, "webhooks")
}
