package cli

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/slipway-dev/slipway/pkg/cluster"
)

func newCertificatesCommand(g *globalOptions, s Streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "certificates",
		Short: "Check and renew kubeadm's certificates",
		Args:  noUnknownCommand,
		RunE:  helpOrUnknown,
	}
	cmd.AddCommand(newCertificatesCheckCommand(g, s), newCertificatesRenewCommand(g, s))
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
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := outputFormat(output, "text", "json"); err != nil {
				return err
			}
			return sf.with(cmd, g, s, func(target *cluster.Target) error {
				expiry := cluster.CertificateExpiry(cmd.Context(), target)
				if err := cmd.Context().Err(); err != nil {
					// What an interrupted check read is not the certificates' state.
					return fmt.Errorf("certificates check interrupted: %w", err)
				}
				problems, err := cluster.PrintCertificates(s.Out, expiry, output == "json", time.Now())
				if err != nil {
					return err
				}
				if len(problems) > 0 {
					return fmt.Errorf("%w:\n  - %s", ErrUnhealthy, strings.Join(problems, "\n  - "))
				}
				return nil
			})
		},
	}
	sf.add(cmd)
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json")
	return cmd
}

func newCertificatesRenewCommand(g *globalOptions, s Streams) *cobra.Command {
	var (
		sf     sshFlags
		output string
	)
	cmd := &cobra.Command{
		Use:   "renew",
		Short: "Renew kubeadm's certificates on every control plane, one at a time",
		Long: `renew runs kubeadm certs renew all on each control plane in turn: every certificate kubeadm
made, except the CAs, is issued again for another year (the CAs and keys stay). Then it
restarts the static pods that read their certificates only when they start, one after the
other, each waited for before the next: the API server (until /readyz answers), the
controller manager and the scheduler. etcd reads its certificates for every connection and is
not restarted. While one control plane's API server restarts the others serve, so a cluster
with several control planes behind a load balancer keeps its API; with one control plane the
API is away for up to half a minute. Each control plane takes about a minute and a half: an API
server stops listening at once but may take the kubelet's 30-second grace period to exit.

Before it starts, every control plane must be reachable and every API server ready, unless a
control plane's certificates have already expired (renewing is then the repair). Afterwards
each certificate must expire later than before, or renew fails and says which did not.

Kubeconfigs fetched before (slipway kubeconfig) embed the old admin certificate, which stays
valid until its own expiry: fetch a new one. Kubelets renew their own client certificates.`,
		Example: `  slipway certificates check -m cluster.yaml -t tf.json
  slipway certificates renew -m cluster.yaml -t tf.json
  slipway certificates renew -m cluster.yaml -o json | jq '.[].earliestExpiryAfter'`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := outputFormat(output, "text", "json"); err != nil {
				return err
			}
			return sf.with(cmd, g, s, func(target *cluster.Target) error {
				res, err := cluster.RenewCertificates(cmd.Context(), target, func(host, stage string, elapsed time.Duration) {
					fmt.Fprintf(s.Err, "[%s] %s (%.1fs)\n", host, stage, elapsed.Seconds())
				})
				if err != nil {
					return err
				}
				return printRows(s.Out, output, res, "HOST\tRENEWED\tFIRST EXPIRY BEFORE\tAFTER\tTOOK", func(w io.Writer, r cluster.RenewedHost) {
					fmt.Fprintf(w, "%s\t%d\t%s\t%s\t%.1fs\n", r.Host, r.Renewed, r.Before.Format(time.DateOnly), r.After.Format(time.DateOnly), r.Seconds)
				})
			})
		},
	}
	sf.add(cmd)
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json")
	return cmd
}
