package cli

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/slipway-dev/slipway/pkg/cluster"
)

func newKubeconfigCommand(g *globalOptions, s Streams) *cobra.Command {
	var (
		sf       sshFlags
		user     cluster.UserKubeconfigOptions
		proxyURL string
	)
	cmd := &cobra.Command{
		Use:   "kubeconfig",
		Short: "Print the cluster's admin kubeconfig, or a short-lived one for a user",
		Long: `Print the admin kubeconfig, read from a control-plane host over SSH. It grants full control
of the cluster: store it with mode 0600 (apply saves it as <cluster>-kubeconfig that way).

With --user, print instead a kubeconfig for that user (and --group groups) whose rights come
from RBAC alone: a key made on this machine and a client certificate the cluster's own signer
issues for --ttl through a CertificateSigningRequest, approved with the admin credentials and
deleted once signed. The cluster CA's key never leaves the control planes. The certificate
cannot be revoked: keep --ttl short, and remove the user's RoleBindings to take rights away.
system:masters and kubeadm:cluster-admins are refused; the admin kubeconfig is for that.

--proxy-url writes that proxy into the kubeconfig's cluster, for an API reached through
'slipway proxy'.`,
		Example: `  slipway kubeconfig -m cluster.yaml -t tf.json > admin.conf && chmod 600 admin.conf
  slipway kubeconfig -m cluster.yaml --user jane --group developers --ttl 8h > jane.conf
  slipway kubeconfig -m cluster.yaml --proxy-url http://127.0.0.1:8080 > admin-proxied.conf`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if user.User == "" && (len(user.Groups) > 0 || cmd.Flags().Changed("ttl")) {
				return usageErrorf("--group and --ttl need --user")
			}
			if user.User != "" {
				if err := user.Validate(); err != nil {
					return &UsageError{Err: err}
				}
			}
			if err := cluster.ValidateProxyURL(proxyURL); err != nil {
				return &UsageError{Err: err}
			}
			return sf.with(cmd, g, s, func(target *cluster.Target) error {
				if user.User == "" {
					data, err := cluster.FetchKubeconfig(cmd.Context(), target)
					if err != nil {
						return err
					}
					if data, err = cluster.SetProxyURL(data, proxyURL); err != nil {
						return err
					}
					_, err = s.Out.Write(data)
					return err
				}
				data, notAfter, err := cluster.FetchUserKubeconfig(cmd.Context(), target, user)
				if err != nil {
					return err
				}
				if data, err = cluster.SetProxyURL(data, proxyURL); err != nil {
					return err
				}
				if _, err := s.Out.Write(data); err != nil {
					return err
				}
				_, err = fmt.Fprintf(s.Err, "kubeconfig for %s (groups %v), valid until %s\n", user.User, user.Groups, notAfter.Local().Format(time.RFC3339))
				return err
			})
		},
	}
	sf.add(cmd)
	cmd.Flags().StringVar(&user.User, "user", "", "make a kubeconfig for this user instead of the admin's")
	cmd.Flags().StringArrayVar(&user.Groups, "group", nil, "a group of the user (repeatable)")
	cmd.Flags().StringVar(&proxyURL, "proxy-url", "", "write this proxy (http, https or socks5 URL) into the kubeconfig's cluster, such as slipway proxy's http://127.0.0.1:8080")
	cmd.Flags().DurationVar(&user.TTL, "ttl", 24*time.Hour, "how long the user's certificate is valid (at least 10m; the cluster caps it at its signing duration, a year by default)")
	return cmd
}
