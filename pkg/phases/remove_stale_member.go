package phases

import (
	"context"
	"fmt"
	"net"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/slipway-dev/slipway/pkg/etcd"
	"github.com/slipway-dev/slipway/pkg/plan"
)

// The remove-stale-member phase removes the etcd member and the Node left behind by a host
// that was reinstalled, so that it can join again under the same name and address. The plan
// checks etcd's quorum before it chooses this step.
var _ = register(Phase{
	Name:  plan.StepRepair,
	Short: "remove the etcd member and Node a reinstalled host left behind",
	Run:   func(ctx context.Context, r *Run, host string) error { return removeStaleMember(ctx, r, host) },
})

// removeStaleMemberRun is what removing a stale member reads of a run.
type removeStaleMemberRun interface {
	nodes
	api
	logger
	Etcd(ctx context.Context) (*etcd.Client, error)
}

func removeStaleMember(ctx context.Context, r removeStaleMemberRun, host string) error {
	n, err := r.Node(host)
	if err != nil {
		return err
	}
	if n.Role == plan.ControlPlane {
		ec, err := r.Etcd(ctx)
		if err != nil {
			return err
		}
		defer ec.Close()
		members, err := ec.Members(ctx)
		if err != nil {
			return err
		}
		for _, m := range members {
			if m.Name == n.Name || peerHost(m.PeerURLs) == n.Address() {
				if err := ec.Remove(ctx, m.ID); err != nil {
					return err
				}
				r.Logf(host, "removed stale etcd member %s (%x)", m.Name, m.ID)
			}
		}
	}
	c, err := r.Kube(ctx)
	if err != nil {
		return err
	}
	err = c.Kube.CoreV1().Nodes().Delete(ctx, n.Name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting the stale Node %s: %w", n.Name, err)
	}
	if err == nil {
		r.Logf(host, "deleted stale Node %s", n.Name)
	}
	return nil
}

// peerHost returns the host part of the first peer URL.
func peerHost(urls []string) string {
	if len(urls) == 0 {
		return ""
	}
	u := strings.TrimPrefix(strings.TrimPrefix(urls[0], "https://"), "http://")
	if h, _, err := net.SplitHostPort(u); err == nil {
		return h
	}
	return u
}
