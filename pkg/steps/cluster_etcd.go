package steps

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/slipway-dev/slipway/pkg/etcd"
	"github.com/slipway-dev/slipway/pkg/plan"
)

// Etcd connects to the cluster's etcd through the SSH connection of a control plane that holds
// the etcd client certificates, using every other control plane's client URL as an endpoint.
func (e *Env) Etcd(ctx context.Context) (*etcd.Client, error) {
	var errs []error
	for _, n := range e.Nodes {
		if n.Role != plan.ControlPlane {
			continue
		}
		h := e.Hosts[n.Name]
		var creds etcd.Credentials
		files := map[string]*[]byte{
			"/etc/kubernetes/pki/etcd/ca.crt":                 &creds.CA,
			"/etc/kubernetes/pki/etcd/healthcheck-client.crt": &creds.Cert,
			"/etc/kubernetes/pki/etcd/healthcheck-client.key": &creds.Key,
		}
		ok := true
		for path, dst := range files {
			var buf bytes.Buffer
			if err := h.Download(ctx, path, &buf); err != nil {
				errs = append(errs, err)
				ok = false
				break
			}
			*dst = buf.Bytes()
		}
		if !ok {
			continue
		}
		var endpoints []string
		endpoints = append(endpoints, "https://"+net.JoinHostPort(n.Address(), "2379"))
		for _, o := range e.Nodes {
			if o.Role == plan.ControlPlane && o != n {
				endpoints = append(endpoints, "https://"+net.JoinHostPort(o.Address(), "2379"))
			}
		}
		return etcd.New(ctx, endpoints, creds, h.DialContext)
	}
	return nil, fmt.Errorf("no control-plane host has the etcd client certificates: %w", errors.Join(errs...))
}

// RemoveStaleMember removes the etcd member and the Node left behind by a control plane that
// was reinstalled, so that it can join again under the same name and address. The plan checks
// quorum before choosing this step.
func (e *Env) RemoveStaleMember(ctx context.Context, host string) error {
	n, err := e.Node(host)
	if err != nil {
		return err
	}
	if n.Role == plan.ControlPlane {
		ec, err := e.Etcd(ctx)
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
				e.logf(host, "removed stale etcd member %s (%x)", m.Name, m.ID)
			}
		}
	}
	c, err := e.Kube(ctx)
	if err != nil {
		return err
	}
	err = c.Kube.CoreV1().Nodes().Delete(ctx, n.Name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting the stale Node %s: %w", n.Name, err)
	}
	if err == nil {
		e.logf(host, "deleted stale Node %s", n.Name)
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

// EtcdMembers converts members for planning.
func EtcdMembers(ms []etcd.Member) []plan.EtcdMember {
	out := make([]plan.EtcdMember, 0, len(ms))
	for _, m := range ms {
		peer := ""
		if len(m.PeerURLs) > 0 {
			peer = m.PeerURLs[0]
		}
		out = append(out, plan.EtcdMember{ID: m.ID, Name: m.Name, PeerURL: peer, Healthy: m.Healthy})
	}
	return out
}
