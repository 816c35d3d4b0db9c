package cli

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/slipway-dev/slipway/pkg/cluster"
)

func newCertificatesCommand(g *globalOptions, s Streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "certificates",
		Short: "Check the expiry of kubeadm's certificates",
		Args:  noUnknownCommand,
		RunE:  helpOrUnknown,
	}
	cmd.AddCommand(newCertificatesCheckCommand(g, s))
	return cmd
}

func newCertificatesCheckCommand(g *globalOptions, s Streams) *cobra.Command {
	var (
		sf     sshFlags
		output string
	)
	cmd := &cobra.Command{
		Use:   "check",
		Short: "List every kubeadm certificate on every control plane with its expiry",
		Long: `check reads, over SSH, every certificate kubeadm made on each control plane (the files under
/etc/kubernetes/pki and the client certificates of kubeadm's kubeconfigs, never their keys) and
lists each with its expiry. kubeadm renews them only on upgrades: a cluster that is not upgraded
within a year stops working. check exits with code 4 when a certificate expires within 30 days
or a control plane cannot be read.`,
		Example: `  slipway certificates check -m cluster.yaml -t tf.json
  slipway certificates check -m cluster.yaml -o json | jq '.[].certificates[0]'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := outputFormat(output, "text", "json"); err != nil {
				return err
			}
			pool, target, err := sf.connect(cmd, g, s)
			if err != nil {
				return err
			}
			defer pool.Close()
			problems, err := cluster.PrintCertificates(s.Out, cluster.CertificateExpiry(cmd.Context(), target), output == "json", time.Now())
			if err != nil {
				return err
			}
			if len(problems) > 0 {
				return fmt.Errorf("%w:\n  - %s", ErrUnhealthy, strings.Join(problems, "\n  - "))
			}
			return nil
		},
	}
	sf.add(cmd)
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json")
	return cmd
}
