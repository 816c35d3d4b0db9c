// Package etcd inspects and repairs the cluster's stacked etcd from the operator's machine:
// member list, health and alarms, snapshots, defragmentation, disarming alarms, and removal of
// a stale member before a reinstalled control plane rejoins. It connects with the etcd
// healthcheck client certificate, through an SSH tunnel.
package etcd

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"
)

// DialFunc opens a connection, for example through an SSH tunnel.
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// Credentials are PEM-encoded client TLS material (kubeadm's etcd CA and the
// apiserver-etcd-client or healthcheck-client certificate and key).
type Credentials struct {
	CA, Cert, Key []byte
}

// Member is one etcd member.
type Member struct {
	ID        uint64
	Name      string
	PeerURLs  []string
	ClientURL string
	// Healthy is true when the member answered its status call. A member with an alarm answers,
	// and stays healthy in this sense: it keeps its vote, and defragmentation, which NOSPACE
	// needs, only works on a member that answers. Alarms says what else is wrong.
	Healthy bool
	Learner bool
	// Alarms are the member's active alarms (NOSPACE, CORRUPT), in etcd's order.
	Alarms []string
	// Leader, Version and DBSize are what the member's status says, when it answered.
	Leader  bool
	Version string
	DBSize  int64
}

// Client is a connection to the etcd cluster.
type Client struct {
	c *clientv3.Client
}

// New connects to the given client endpoints (https://host:2379).
func New(ctx context.Context, endpoints []string, creds Credentials, dial DialFunc) (*Client, error) {
	cert, err := tls.X509KeyPair(creds.Cert, creds.Key)
	if err != nil {
		return nil, fmt.Errorf("etcd client certificate: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(creds.CA) {
		return nil, errors.New("etcd CA certificate: no PEM certificates found")
	}
	cfg := clientv3.Config{
		Endpoints:   endpoints,
		DialTimeout: 10 * time.Second,
		TLS:         &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: pool, MinVersion: tls.VersionTLS12},
		Logger:      zap.NewNop(),
		Context:     ctx,
	}
	if dial != nil {
		cfg.DialOptions = []grpc.DialOption{grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
			return dial(ctx, "tcp", addr)
		})}
	}
	c, err := clientv3.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("connecting to etcd %v: %w", endpoints, err)
	}
	return &Client{c: c}, nil
}

// Close closes the connection.
func (c *Client) Close() error { return c.c.Close() }

// Members lists the members with their active alarms, and checks each one's health with a short
// status call.
func (c *Client) Members(ctx context.Context) ([]Member, error) {
	lctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	resp, err := c.c.MemberList(lctx)
	if err != nil {
		return nil, fmt.Errorf("listing etcd members: %w", err)
	}
	active, err := c.Alarms(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Member, 0, len(resp.Members))
	for _, m := range resp.Members {
		mem := Member{ID: m.ID, Name: m.Name, PeerURLs: m.PeerURLs, Learner: m.IsLearner}
		for _, a := range active {
			if a.MemberID == m.ID {
				mem.Alarms = append(mem.Alarms, a.Type)
			}
		}
		if len(m.ClientURLs) > 0 {
			mem.ClientURL = m.ClientURLs[0]
			sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			st, err := c.c.Status(sctx, mem.ClientURL)
			cancel()
			mem.Healthy = err == nil
			if err == nil {
				mem.Leader, mem.Version, mem.DBSize = st.Leader == m.ID, st.Version, st.DbSize
			}
		}
		out = append(out, mem)
	}
	return out, nil
}

// Remove removes a member by ID. Removing a member that is already gone is not an error.
func (c *Client) Remove(ctx context.Context, id uint64) error {
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if _, err := c.c.MemberRemove(rctx, id); err != nil {
		if errors.Is(err, errMemberNotFound) || isNotFound(err) {
			return nil
		}
		return fmt.Errorf("removing etcd member %x: %w", id, err)
	}
	return nil
}
