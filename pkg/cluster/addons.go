package cluster

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"

	"github.com/slipway-dev/slipway/pkg/addons"
	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/applied"
	"github.com/slipway-dev/slipway/pkg/config"
	"github.com/slipway-dev/slipway/pkg/kube"
	"github.com/slipway-dev/slipway/pkg/mcdeploy"
	"github.com/slipway-dev/slipway/pkg/plan"
)

// userAddons reads and renders the objects of addons.path (none without it). A folder that
// cannot be read, or a file that does not render or parse, is a config.Error naming the file
// and line, before any host is reached.
func userAddons(c *v1beta1.Cluster) ([]addons.Object, error) {
	if c.Addons == nil {
		return nil, nil
	}
	source := "addons.path " + c.Addons.Path
	files, err := readAddonFiles(c.Addons.Path)
	if err != nil {
		return nil, &config.Error{Source: source, Err: err}
	}
	objs, err := addons.RenderSet(c.Name, files, addons.ValuesFor(c))
	if err != nil {
		return nil, &config.Error{Source: source, Err: err}
	}
	return objs, nil
}

// readAddonFiles reads every *.yaml and *.yml file under dir, subdirectories included, in path
// order, named by their path relative to dir; names that start with a dot (.git, editor
// files) are skipped.
func readAddonFiles(dir string) ([]addons.File, error) {
	if info, err := os.Stat(dir); err != nil || !info.IsDir() {
		if err == nil {
			err = fmt.Errorf("not a directory")
		}
		return nil, err
	}
	var files []addons.File
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if path != dir && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		ext := strings.ToLower(filepath.Ext(d.Name()))
		if d.IsDir() || (ext != ".yaml" && ext != ".yml") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		files = append(files, addons.File{Name: filepath.ToSlash(rel), Data: data})
		return nil
	})
	return files, err
}

// addonKinds are the kinds of objs, which the probe lists besides the recorded ones.
func addonKinds(objs []addons.Object) []schema.GroupVersionKind {
	var out []schema.GroupVersionKind
	for _, o := range objs {
		out = append(out, o.Obj.GroupVersionKind())
	}
	return out
}

// desireUserAddons puts the objects of addons.path into d, which holds everything else the
// manifest renders: their names and hashes for the plan, the objects for the addons phase. An
// object that slipway applies itself (the CNI's, the cloud-controller-manager's, the
// machine-controller's, a pool's MachineDeployment, the slipway-state record) is refused: the
// addon would undo slipway's own apply, and its prune would delete what slipway installs.
func desireUserAddons(c *v1beta1.Cluster, objs []addons.Object, d *Desired) error {
	own, err := ownObjects(c, d)
	if err != nil {
		return err
	}
	var errs []error
	for _, o := range objs {
		gvk := o.Obj.GroupVersionKind()
		if by, ok := own[gvk.Group+"/"+gvk.Kind+"/"+o.Obj.GetNamespace()+"/"+o.Obj.GetName()]; ok {
			errs = append(errs, fmt.Errorf("%s: slipway applies this object itself (%s); an addon may not", o, by))
		}
	}
	if len(errs) > 0 {
		return &config.Error{Source: "addons.path " + c.Addons.Path, Err: utilerrors.NewAggregate(errs)}
	}
	d.Plan.AddonsPath = c.Addons != nil
	d.Rendered.UserAddons = objs
	for _, o := range objs {
		d.Plan.UserAddons = append(d.Plan.UserAddons, plan.AddonObject{APIVersion: o.Obj.GetAPIVersion(), Kind: o.Obj.GetKind(),
			Namespace: o.Obj.GetNamespace(), Name: o.Obj.GetName(), Source: fmt.Sprintf("%s:%d", o.File, o.Line), Hash: o.Hash})
	}
	return nil
}

// ownObjects are the objects slipway applies itself for the manifest, by
// "<group>/<Kind>/<namespace>/<name>", each with what applies it.
func ownObjects(c *v1beta1.Cluster, d *Desired) (map[string]string, error) {
	own := map[string]string{"/ConfigMap/kube-system/" + applied.StateConfigMap: "the record of what slipway applied"}
	add := func(by string, objs []*unstructured.Unstructured) {
		for _, o := range objs {
			gvk := o.GroupVersionKind()
			own[gvk.Group+"/"+gvk.Kind+"/"+o.GetNamespace()+"/"+o.GetName()] = by
		}
	}
	for _, m := range []struct {
		by   string
		data []byte
	}{{"the CNI", d.Rendered.CNI}, {"the worker pools", d.Rendered.MachineDeployments}} {
		objs, err := kube.Decode(m.data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", m.by, err)
		}
		add(m.by, objs)
	}
	add("the cloud-controller-manager", d.Rendered.CloudController)
	if d.Rendered.MachineControllerHash != "" {
		objs, err := mcdeploy.Render(c, nil)
		if err != nil {
			return nil, err
		}
		add("the machine-controller", objs)
	}
	return own, nil
}
