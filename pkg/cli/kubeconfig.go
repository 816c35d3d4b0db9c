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
		file     string
	)
	cmd := &cobra.Command{
		Use:   "kubeconfig",
		Short: "Print the cluster's admin kubeconfig, or write a short-lived one for a user",
		Long: `Print the admin kubeconfig, read from a control-plane host over SSH and rebuilt from its
server, CA and credentials alone. It grants full control of the cluster: store it with mode 0600
(apply saves it as <cluster>-kubeconfig that way), or write it with --file.

With --user, make instead a kubeconfig for that user (and --group groups) whose rights come
from RBAC alone: a key made on this machine and a client certificate the cluster's own signer
issues for --ttl (10m to a year) through a CertificateSigningRequest, approved with the admin
credentials and deleted once signed; the certificate must be for that user, those groups and
that key. The cluster CA's key never leaves the control planes. The certificate cannot be
revoked: keep --ttl short, and remove the user's RoleBindings to take rights away. It holds the
key, so it is written to --file FILE (mode 0600, replaced atomically); --file - prints it.
system:masters and kubeadm:cluster-admins are refused, the admin kubeconfig is for that; so are
user names starting with system: and groups starting with system: or kubeadm: (the identities
of nodes, bootstrap tokens and control-plane components) unless --allow-system-identity.

--proxy-url writes that proxy into the kubeconfig's cluster, for an API reached through
'slipway proxy'.

KubeOne's spelling, slipway kubeconfig generate, is the same command, and takes KubeOne's
--cn and --on for --user and --group.`,
		Example: `  slipway kubeconfig -m cluster.yaml -t tf.json --file admin.conf
  slipway kubeconfig -m cluster.yaml --user jane --group developers --ttl 8h --file jane.conf
  slipway kubeconfig -m cluster.yaml --proxy-url http://127.0.0.1:8080 > admin-proxied.conf`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if user.User == "" && (len(user.Groups) > 0 || cmd.Flags().Changed("ttl") || user.AllowSystemIdentity) {
				return usageErrorf("--group, --ttl and --allow-system-identity need --user")
			}
			if user.User != "" {
				if err := user.Validate(); err != nil {
					return &UsageError{Err: err}
				}
				if file == "" {
					return usageErrorf("--user makes a private key: write the kubeconfig with --file FILE (mode 0600), or print it with --file -")
				}
			}
			if err := cluster.ValidateProxyURL(proxyURL); err != nil {
				return &UsageError{Err: err}
			}
			return sf.with(cmd, g, s, func(target *cluster.Target) error {
				var (
					data     []byte
					notAfter time.Time
					err      error
				)
				if user.User == "" {
					data, err = cluster.FetchKubeconfig(cmd.Context(), target)
				} else {
					data, notAfter, err = cluster.FetchUserKubeconfig(cmd.Context(), target, user)
				}
				if err != nil {
					return err
				}
				if data, err = cluster.SetProxyURL(data, proxyURL); err != nil {
					return err
				}
				if err := writeKubeconfig(s, file, data); err != nil {
					return err
				}
				where := ""
				if file != "" && file != "-" {
					where = " written to " + file + " (mode 0600)"
				}
				switch {
				case user.User != "":
					_, err = fmt.Fprintf(s.Err, "kubeconfig for %s (groups %v)%s, valid until %s\n", user.User, user.Groups, where, notAfter.Local().Format(time.RFC3339))
				case where != "":
					_, err = fmt.Fprintf(s.Err, "admin kubeconfig%s\n", where)
				}
				return err
			})
		},
	}
	sf.add(cmd)
	cmd.Flags().StringVar(&user.User, "user", "", "make a kubeconfig for this user instead of the admin's")
	cmd.Flags().StringArrayVar(&user.Groups, "group", nil, "a group of the user (repeatable)")
	cmd.Flags().StringVar(&proxyURL, "proxy-url", "", "write this proxy (http, https or socks5 URL) into the kubeconfig's cluster, such as slipway proxy's http://127.0.0.1:8080")
	cmd.Flags().DurationVar(&user.TTL, "ttl", 24*time.Hour, "how long the user's certificate is valid (10m to 8760h, a year: the cluster's signing duration)")
	cmd.Flags().BoolVar(&user.AllowSystemIdentity, "allow-system-identity", false, "allow a --user starting with system: and --group starting with system: or kubeadm: (never system:masters or kubeadm:cluster-admins)")
	cmd.Flags().StringVar(&file, "file", "", "write the kubeconfig to this file, mode 0600 (required with --user; - prints it)")
	return cmd
}

// writeKubeconfig writes the kubeconfig to file with mode 0600, or to the output when file is
// "" (the admin kubeconfig's default) or "-".
func writeKubeconfig(s Streams, file string, data []byte) error {
	if file == "" || file == "-" {
		_, err := s.Out.Write(data)
		return err
	}
	_, err := cluster.WriteKubeconfig(file, data)
	return err
}
