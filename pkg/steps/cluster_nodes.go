package steps

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/slipway-dev/slipway/pkg/kube"
)

// WaitNodesReady waits until every host of the manifest is a Ready Node.
func (e *Env) WaitNodesReady(ctx context.Context, _ string) error {
	c, err := e.Kube(ctx)
	if err != nil {
		return err
	}
	return kube.Wait(ctx, "every node to be Ready", 10*time.Minute, func(ctx context.Context) (bool, string, error) {
		var waiting []string
		for _, n := range e.Nodes {
			node, err := c.Kube.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
			switch {
			case apierrors.IsNotFound(err):
				waiting = append(waiting, n.Name+" (not registered)")
			case err != nil:
				return false, "", err
			case !NodeReady(node):
				waiting = append(waiting, n.Name+" (NotReady: "+readyMessage(node)+")")
			}
		}
		sort.Strings(waiting)
		return len(waiting) == 0, strings.Join(waiting, ", "), nil
	})
}

// NodeReady reports the Node's Ready condition.
func NodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func readyMessage(n *corev1.Node) string {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Message
		}
	}
	return "no Ready condition yet"
}

// waitNodeRegistered waits until the kubelet of name has registered its Node.
func waitNodeRegistered(ctx context.Context, c *kube.Client, name string) error {
	return kube.Wait(ctx, fmt.Sprintf("node %s to register", name), 3*time.Minute, func(ctx context.Context) (bool, string, error) {
		_, err := c.Kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, "not registered", nil
		}
		return err == nil, "", err
	})
}
