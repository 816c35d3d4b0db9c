package applied

import (
	"context"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/slipway-dev/slipway/pkg/kube"
)

// AddonKindsKey is the entry of StateConfigMap that lists the kinds of the user addon set
// (addons.path) whose objects the cluster may hold, one "<apiVersion> <kind>" a line: the probe
// lists the objects of these kinds that carry the set's label, and apply prunes among them. The
// addons phase records the kinds it is about to apply before it applies any, so that the objects
// of a run interrupted halfway are found again, and only the kinds it applied once it has pruned.
const AddonKindsKey = "addons.kinds"

// AddonKinds reads the recorded kinds of the user addon set; none without the record.
func AddonKinds(ctx context.Context, c *kube.Client) ([]schema.GroupVersionKind, error) {
	data, err := read(ctx, c)
	if err != nil {
		return nil, err
	}
	return ParseAddonKinds(data[AddonKindsKey]), nil
}

// ParseAddonKinds reads the value of AddonKindsKey, skipping lines it cannot read.
func ParseAddonKinds(s string) []schema.GroupVersionKind {
	var out []schema.GroupVersionKind
	for _, l := range strings.Split(s, "\n") {
		f := strings.Fields(l)
		if len(f) != 2 {
			continue
		}
		gv, err := schema.ParseGroupVersion(f[0])
		if err != nil {
			continue
		}
		out = append(out, gv.WithKind(f[1]))
	}
	return out
}

// RecordAddonKinds records kinds (deduplicated and sorted) as the user addon set's.
func RecordAddonKinds(ctx context.Context, c *kube.Client, kinds []schema.GroupVersionKind) error {
	var lines []string
	for _, k := range kinds {
		apiVersion, kind := k.ToAPIVersionAndKind()
		lines = append(lines, apiVersion+" "+kind)
	}
	slices.Sort(lines)
	return Record(ctx, c, AddonKindsKey, strings.Join(slices.Compact(lines), "\n"))
}

// read returns the data of StateConfigMap, empty when there is none.
func read(ctx context.Context, c *kube.Client) (map[string]string, error) {
	cm, err := c.Kube.CoreV1().ConfigMaps("kube-system").Get(ctx, StateConfigMap, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", StateConfigMap, err)
	}
	if cm.Data == nil {
		return map[string]string{}, nil
	}
	return cm.Data, nil
}
