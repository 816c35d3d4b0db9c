package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/slipway-dev/slipway/pkg/cluster"
	"github.com/slipway-dev/slipway/pkg/etcd"
)

func newEtcdCommand(g *globalOptions, s Streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "etcd",
		Short: "Inspect, back up and repair the cluster's etcd",
		Long: `The etcd commands reach the cluster's stacked etcd through a control plane over SSH, with
kubeadm's etcd health-check client certificate; etcd need not be reachable from this machine.`,
		Args: noUnknownCommand,
		RunE: helpOrUnknown,
	}
	cmd.AddCommand(newEtcdMembersCommand(g, s), newEtcdSnapshotCommand(g, s), newEtcdDefragmentCommand(g, s), newEtcdDisarmCommand(g, s))
	return cmd
}

func newEtcdMembersCommand(g *globalOptions, s Streams) *cobra.Command {
	var (
		sf     sshFlags
		output string
	)
	cmd := &cobra.Command{
		Use:     "members",
		Short:   "List the etcd members with their health, version, database size, alarms and the leader",
		Example: `  slipway etcd members -m cluster.yaml -t tf.json`,
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := outputFormat(output, "text", "json"); err != nil {
				return err
			}
			return sf.with(cmd, g, s, func(target *cluster.Target) error {
				ms, err := cluster.EtcdMembers(cmd.Context(), target)
				if err != nil {
					return err
				}
				return printRows(s.Out, output, ms, "NAME\tID\tPEER URL\tHEALTHY\tLEADER\tVERSION\tDB SIZE\tALARMS", func(w io.Writer, m etcd.Member) {
					peer := ""
					if len(m.PeerURLs) > 0 {
						peer = m.PeerURLs[0]
					}
					size := "-"
					if m.DBSize > 0 {
						size = mib(m.DBSize)
					}
					fmt.Fprintf(w, "%s\t%x\t%s\t%t\t%t\t%s\t%s\t%s\n", m.Name, m.ID, peer, m.Healthy, m.Leader, dashIfEmpty(m.Version), size,
						dashIfEmpty(strings.Join(m.Alarms, ",")))
				})
			})
		},
	}
	sf.add(cmd)
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json")
	return cmd
}

func newEtcdSnapshotCommand(g *globalOptions, s Streams) *cobra.Command {
	var (
		sf     sshFlags
		file   string
		output string
	)
	cmd := &cobra.Command{
		Use:   "snapshot --file FILE",
		Short: "Save a consistent snapshot of etcd to a file on this machine",
		Long: `snapshot streams a consistent snapshot of etcd (as etcdctl snapshot save takes it) from a
control plane to --file FILE on this machine, checks the SHA-256 etcd appends to it, and writes
FILE.sha256 beside it (sha256sum -c reads it). FILE is written with mode 0600: it holds every
Secret of the cluster. An existing FILE is never overwritten, and an interrupted snapshot leaves
no file behind. -o is the output format of the result (its path, size and SHA-256), as
everywhere else.`,
		Example: `  slipway etcd snapshot -m cluster.yaml --file etcd-$(date +%F).db
  slipway etcd snapshot -m cluster.yaml --file etcd.db -o json | jq -r .sha256`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if output != "text" && output != "json" {
				// Before --file, -o named the snapshot's file.
				return usageErrorf("--output %q is not an output format (text or json): the snapshot's file is given with --file, as in slipway etcd snapshot --file %s", output, output)
			}
			if file == "" {
				return usageErrorf("snapshot needs --file FILE, the file to write the snapshot to")
			}
			return sf.with(cmd, g, s, func(target *cluster.Target) error {
				snap, err := cluster.EtcdSnapshot(cmd.Context(), target, file)
				if err != nil {
					return err
				}
				if output == "json" {
					return printJSON(s.Out, snap)
				}
				_, err = fmt.Fprintf(s.Out, "etcd snapshot written to %s (%s, sha256 %s)\n", snap.Path, mib(snap.Bytes), snap.SHA256)
				return err
			})
		},
	}
	sf.add(cmd)
	cmd.Flags().StringVar(&file, "file", "", "file to write the snapshot to (required; never overwritten)")
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json")
	return cmd
}

func newEtcdDefragmentCommand(g *globalOptions, s Streams) *cobra.Command {
	var (
		sf     sshFlags
		output string
	)
	cmd := &cobra.Command{
		Use:   "defragment",
		Short: "Give the space of deleted data in etcd's database files back, one member at a time",
		Long: `defragment rewrites each etcd member's database file without the space that deleted and
compacted revisions left free, as etcdctl defrag does: the database shrinks, and a cluster
that hit etcd's space quota can take writes again once the space is reclaimed.

A member answers nothing while it rewrites its file (seconds for a few hundred MiB), so the
members go one at a time: followers first, the leader last. Every member must be healthy
(answer) before the first starts; with one down, defragmenting another could cost the cluster
its quorum. A member with an alarm answers: NOSPACE is what defragmenting is for, before slipway
etcd disarm. On a cluster with one control plane the API waits while its only member is at work.

Progress goes to standard error; the table (or JSON with -o json) to standard output.`,
		Example: `  slipway etcd defragment -m cluster.yaml -t tf.json
  slipway etcd defragment -m cluster.yaml -o json | jq '.[] | .dbSizeBefore - .dbSizeAfter'`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := outputFormat(output, "text", "json"); err != nil {
				return err
			}
			return sf.with(cmd, g, s, func(target *cluster.Target) error {
				res, err := cluster.EtcdDefragment(cmd.Context(), target, func(member string, d *cluster.Defragmented) {
					if d == nil {
						fmt.Fprintf(s.Err, "defragmenting etcd member %s…\n", member)
						return
					}
					fmt.Fprintf(s.Err, "defragmented etcd member %s: %s → %s in %.1fs\n", d.Name, mib(d.Before), mib(d.After), d.Seconds)
				})
				if err != nil {
					return err
				}
				return printRows(s.Out, output, res, "NAME\tID\tLEADER\tDB SIZE BEFORE\tAFTER\tTOOK", func(w io.Writer, d cluster.Defragmented) {
					fmt.Fprintf(w, "%s\t%s\t%t\t%s\t%s\t%.1fs\n", d.Name, d.ID, d.Leader, mib(d.Before), mib(d.After), d.Seconds)
				})
			})
		},
	}
	sf.add(cmd)
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json")
	return cmd
}

func newEtcdDisarmCommand(g *globalOptions, s Streams) *cobra.Command {
	var (
		sf     sshFlags
		output string
		all    bool
	)
	cmd := &cobra.Command{
		Use:   "disarm (MEMBER | --all)",
		Short: "Deactivate etcd's alarms (NOSPACE, CORRUPT) on one member, or on all of them",
		Long: `disarm deactivates the active alarms of the etcd member MEMBER (its name or its ID, as
slipway etcd members shows them), or with --all of every member (what etcdctl alarm disarm does).
It prints each alarm it deactivated with its member, or that there was none.

etcd raises NOSPACE when a member's database reaches its space quota (2 GiB unless set): from
then on the whole cluster serves reads and deletes but refuses every write, so Kubernetes can
create or change nothing, until no member has the alarm. Disarming alone does not help: the
next write that does not fit raises it again. Free the space first: delete what filled etcd
(the API server compacts old revisions every few minutes), then run slipway etcd defragment,
which gives the space back to each member's database file; then disarm.

CORRUPT means a member's data differs from the others'. Replace the member (reinstall its
control plane, so that it rejoins with the others' data) before disarming.

slipway etcd members and slipway status show the active alarms; status counts one as a problem.`,
		Example: `  slipway etcd members -m cluster.yaml            # the ALARMS column
  slipway etcd defragment -m cluster.yaml         # after deleting what filled etcd
  slipway etcd disarm -m cluster.yaml --all
  slipway etcd disarm -m cluster.yaml cp-1 -o json`,
		Args: func(c *cobra.Command, args []string) error {
			switch {
			case len(args) > 1:
				return usageErrorf("%s takes one MEMBER, got %q", c.CommandPath(), args)
			case len(args) == 1 && all:
				return usageErrorf("%s takes a MEMBER or --all, not both", c.CommandPath())
			case len(args) == 0 && !all:
				return usageErrorf("%s needs a MEMBER, or --all for every member (slipway etcd members lists them)", c.CommandPath())
			case len(args) == 1 && args[0] == "":
				return usageErrorf("%s: the MEMBER is empty", c.CommandPath())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := outputFormat(output, "text", "json"); err != nil {
				return err
			}
			member := ""
			if len(args) == 1 {
				member = args[0]
			}
			return sf.with(cmd, g, s, func(target *cluster.Target) error {
				res, err := cluster.EtcdDisarm(cmd.Context(), target, member)
				if errors.Is(err, cluster.ErrNoSuchMember) {
					return &UsageError{Err: err}
				}
				if err != nil {
					return err
				}
				if output == "text" && len(res) == 0 {
					where := ""
					if member != "" {
						where = " on etcd member " + member
					}
					_, err := fmt.Fprintf(s.Out, "no active alarms%s\n", where)
					return err
				}
				return printRows(s.Out, output, res, "MEMBER\tID\tALARM DISARMED", func(w io.Writer, d cluster.Disarmed) {
					fmt.Fprintf(w, "%s\t%s\t%s\n", dashIfEmpty(d.Member), d.ID, d.Alarm)
				})
			})
		},
	}
	sf.add(cmd)
	cmd.Flags().BoolVar(&all, "all", false, "disarm the alarms of every member")
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json")
	return cmd
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

func dashIfEmpty(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
