package steps

import (
	"context"
	"fmt"

	"github.com/slipway-dev/slipway/pkg/kube"
)

// ApplyAddon returns a step that server-side applies manifests and records their hash under
// name, so that the next apply skips them while they are unchanged.
func (e *Env) ApplyAddon(name string, manifests []byte) Func {
	return func(ctx context.Context, _ string) error {
		c, err := e.Kube(ctx)
		if err != nil {
			return err
		}
		objs, err := kube.Decode(manifests)
		if err != nil {
			return fmt.Errorf("%s manifests: %w", name, err)
		}
		if err := c.Apply(ctx, objs); err != nil {
			return err
		}
		e.logf("", "applied %d %s objects", len(objs), name)
		return RecordAddon(ctx, c, name, Hash(manifests))
	}
}
