package sandboxapi

import (
	"context"
	"errors"
	"os"
)

// Down removes the sandbox's containers (hosts, load balancer, assets server), volumes and
// network, and the generated files in its state directory. The SSH user key stays, so that a
// later up hands out the same key.
func (sb *Sandbox) Down(ctx context.Context) error {
	err := Down(ctx, sb.Name)
	for _, name := range []string{StateFile, TFOutputFile, KnownHostsFile, ManifestFile, "bin", "hosts"} {
		err = errors.Join(err, os.RemoveAll(sb.Path(name)))
	}
	return err
}

// Down removes every Docker object labelled with the sandbox name, whether or not a state
// directory still describes it (after a crash, say). An empty name removes the objects of every
// sandbox on this machine, and still only objects that carry the sandbox label.
func Down(ctx context.Context, name string) error {
	var errs []error
	containers, err := labelled(ctx, "container", name)
	errs = append(errs, err)
	if len(containers) > 0 {
		_, err := docker(ctx, append([]string{"rm", "-f", "-v"}, containers...)...)
		errs = append(errs, err)
	}
	volumes, err := labelled(ctx, "volume", name)
	errs = append(errs, err)
	if len(volumes) > 0 {
		_, err := docker(ctx, append([]string{"volume", "rm", "-f"}, volumes...)...)
		errs = append(errs, err)
	}
	networks, err := labelled(ctx, "network", name)
	errs = append(errs, err)
	if len(networks) > 0 {
		_, err := docker(ctx, append([]string{"network", "rm"}, networks...)...)
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Leftovers lists the Docker objects (kind/id) labelled with the sandbox name, or with any
// sandbox name if name is empty: after Down there should be none.
func Leftovers(ctx context.Context, name string) ([]string, error) {
	var all []string
	for _, kind := range []string{"container", "volume", "network"} {
		ids, err := labelled(ctx, kind, name)
		if err != nil {
			return nil, err
		}
		for _, id := range ids {
			all = append(all, kind+"/"+id)
		}
	}
	return all, nil
}
