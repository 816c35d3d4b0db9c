package cli

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/slipway-dev/slipway/pkg/cluster"
	"github.com/slipway-dev/slipway/pkg/phases"
	"github.com/slipway-dev/slipway/pkg/ssh"
)

// sshFlags are the SSH settings of commands that reach hosts.
type sshFlags struct {
	trustUnknownHosts bool
	knownHosts        string
	connectTimeout    time.Duration
	parallel          int
}

func (f *sshFlags) add(cmd *cobra.Command) { f.addWithTimeout(cmd, ssh.DefaultConnectTimeout) }

// addWithTimeout adds the flags with connectTimeout as --ssh-connect-timeout's default. A
// command that reaches hosts reads the manifest, the Terraform output and -v.
func (f *sshFlags) addWithTimeout(cmd *cobra.Command, connectTimeout time.Duration) {
	readsInputs(cmd)
	reads(cmd, flagVerbose)
	cmd.Flags().BoolVar(&f.trustUnknownHosts, "trust-unknown-hosts", false, "accept SSH host keys seen for the first time and record them in the cluster's known_hosts (changed keys are always refused)")
	cmd.Flags().StringVar(&f.knownHosts, "known-hosts", "", "the cluster's known_hosts file (default $XDG_CONFIG_HOME/slipway/<cluster>/known_hosts)")
	cmd.Flags().DurationVar(&f.connectTimeout, "ssh-connect-timeout", connectTimeout, "how long a host whose SSH refuses or times out is retried before it counts as unreachable (a server still booting)")
	cmd.Flags().IntVar(&f.parallel, "parallel", 10, "how many hosts to work on at once")
}

func newApplyCommand(g *globalOptions, s Streams) *cobra.Command {
	var (
		sf      sshFlags
		opts    cluster.ApplyOptions
		output  string
		upgrade bool
		restore string
		pkiFile string
	)
	cmd := &cobra.Command{
		Use:     "apply",
		Aliases: []string{"upgrade"},
		Short:   "Install, repair or upgrade the cluster to match the manifest",
		Long: `apply probes every host and the running cluster, prints a plan of the steps that would
converge them to the manifest, and after confirmation carries it out: prerequisites and
Kubernetes binaries, kubeadm init on the leader, control-plane joins one at a time, the CNI,
static workers, and worker pools. Run it again at any time: on a converged cluster it changes
nothing, an interrupted run is finished by the next one, a reinstalled host is repaired, and
a raised versions.kubernetes upgrades the cluster one node at a time.

Each worker pool's live MachineDeployment is compared with the manifest's, field by field: the
plan lists every difference and what apply does about it (scale, rolling update of N machines,
in place, or kept: the replicas of a pool with autoscaler bounds belong to the
cluster-autoscaler, and the manifest's count is only its size at creation), so a kubectl scale
or edit is found and reverted. Node labels, annotations and taints change in place, without
replacing a Machine.

When a run applies the worker pools (or one of them is not Ready), apply waits until every
pool has its replicas of Machines, each a Ready Node, for at most --pools-timeout, printing
each Machine's progress: server ACTIVE, address, Node registered, Ready, with the time each
took. A Machine that does not join in time fails apply with its name, its phase and
conditions, and the last lines of its server's console log (read with the OS_* credentials).
--wait-pools=false skips the wait.

With encryption.enabled, Secrets are encrypted at rest with a key kept on the control planes
only. On a running cluster, enabling it restarts the API servers one at a time (each waited
for until it is ready and uses the new configuration) and then rewrites every Secret.
--rotate-encryption-key replaces the key in the same careful stages.

--restore-from makes a cluster whose control planes were all lost again, on fresh
control-plane hosts (new or reset), from an etcd snapshot (slipway etcd snapshot or slipway
backup) and the PKI backup (the <cluster>-pki.tar.gz apply saves; --pki-backup names
another). The leader gets the backup's CAs and keys and etcd's data from the snapshot, then
kubeadm init starts on them; the other control planes join anew. The cluster comes back as
the snapshot holds it, kube-system's UID included: existing kubeconfigs and ServiceAccount
tokens stay valid, and the workers' kubelets reconnect. What was written after the snapshot
is lost. The manifest's versions.kubernetes must be the version the snapshot's cluster ran.
Apply refuses while any control plane still holds a cluster (use apply without the flag to
repair one). With encryption.enabled the PKI backup must hold the encryption configuration the
snapshot's Secrets were encrypted with (slipway backup's, or apply's of that time), which the
leader gets back before its API server starts. Both files are checked before any host is
reached and must be regular files; a PKI backup with any member that is not slipway's own (a
path out of the PKI directory, a link, a device, one too large) is refused whole (exit code 3).

With -o json, stdout carries the plan as one JSON document (its "poolChanges" lists the differences
of the worker pools: pool, field, live, wanted, action, machines) and, after a run (or a wait for
the pools that failed), a second one with the worker pools as the run left them: {"pools": [{"name", "replicas", "ready",
"machines": [{"name", "phase", "providerID", "address", "node", "ready", "elapsed",
"elapsedSeconds"}]}]}.`,
		Example: `  # See what would change, then do it
  slipway apply -m cluster.yaml -t tf.json --dry-run
  slipway apply -m cluster.yaml -t tf.json

  # Unattended (CI), first contact with new hosts
  slipway apply -m cluster.yaml -t ./terraform --auto-approve --trust-unknown-hosts

  # The plan for automation
  slipway apply -m cluster.yaml -t tf.json --dry-run -o json

  # Rotate the key that encrypts Secrets at rest (encryption.enabled), without downtime
  slipway apply -m cluster.yaml -t tf.json --rotate-encryption-key --dry-run
  slipway apply -m cluster.yaml -t tf.json --rotate-encryption-key

  # Every control plane was lost: make the cluster again from a snapshot on fresh hosts
  slipway apply -m cluster.yaml -t tf.json --restore-from backups/prod-20261128T061500Z-etcd.db \
    --pki-backup backups/prod-20261128T061500Z-pki.tar.gz`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := outputFormat(output, "text", "json"); err != nil {
				return err
			}
			if opts.PoolTimeout <= 0 {
				return usageErrorf("--pools-timeout %s: must be positive", opts.PoolTimeout)
			}
			if pkiFile != "" && restore == "" {
				return usageErrorf("--pki-backup is read only with --restore-from")
			}
			res, err := load(cmd, g, s)
			if err != nil {
				return err
			}
			if restore != "" {
				if pkiFile == "" {
					pkiFile = cluster.PKIBackupPath(res.Cluster.Name)
				}
				if opts.Restore, err = cluster.LoadRestore(restore, pkiFile, res.Cluster.Encryption.Enabled); err != nil {
					return err
				}
			}
			pool, target, err := cluster.Connect(res.Cluster, sf.connectOptions(g, s))
			if err != nil {
				return err
			}
			defer pool.Close()
			opts.JSON = output == "json"
			opts.Parallel = sf.parallel
			opts.UpgradeMachineDeployments = upgrade
			opts.Out, opts.Log = s.Out, g.progress(s)
			if opts.JSON {
				opts.Log = s.Err
			}
			opts.Confirm = terminalConfirm(s)
			opts.KillAt = os.Getenv("SLIPWAY_TEST_KILL_AT")
			return cluster.Apply(cmd.Context(), target, opts)
		},
	}
	sf.add(cmd)
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "print the plan and stop; nothing is changed")
	cmd.Flags().BoolVarP(&opts.AutoApprove, "auto-approve", "y", false, "carry out the plan without asking")
	cmd.Flags().StringVarP(&output, "output", "o", "text", "plan format: text or json")
	cmd.Flags().BoolVar(&upgrade, "upgrade-machine-deployments", false, "raise the kubelet version of every existing MachineDeployment in kube-system to versions.kubernetes, so the machine-controller rolls them (without it, existing pools keep their version)")
	cmd.Flags().BoolVar(&opts.RenewCertificates, "renew-certificates", false, "after the plan, renew kubeadm's certificates on every control plane, one at a time (as slipway certificates renew does); apply warns when one expires within 30 days")
	cmd.Flags().BoolVar(&opts.RotateEncryptionKey, "rotate-encryption-key", false, "replace the key that encrypts Secrets at rest (encryption.enabled) without downtime: a new key is added second on every control plane, made the one that encrypts once every API server reads it, every Secret is rewritten (the count is reported), then the old key is dropped, each stage waited for on every API server; a run killed on the way is finished by the next apply, with or without the flag")
	cmd.Flags().BoolVar(&opts.WaitPools, "wait-pools", true, "wait until every worker pool's Machines are Ready Nodes; false leaves them joining in the background")
	cmd.Flags().StringVar(&restore, "restore-from", "", "make the cluster again from this etcd snapshot, on control planes that are all fresh (see above)")
	cmd.Flags().StringVar(&pkiFile, "pki-backup", "", "with --restore-from: the PKI backup holding the cluster's CAs and keys, and its encryption configuration with encryption.enabled (default <cluster>-pki.tar.gz)")
	cmd.Flags().DurationVar(&opts.PoolTimeout, "pools-timeout", phases.DefaultPoolTimeout, "how long to wait for the worker pools before failing with the Machines that did not join")
	return cmd
}

// with loads the manifest (and Terraform output), prepares SSH to its hosts and runs do on
// them, for the commands that reach an existing cluster; the connections close afterwards.
func (f *sshFlags) with(cmd *cobra.Command, g *globalOptions, s Streams, do func(*cluster.Target) error) error {
	res, err := load(cmd, g, s)
	if err != nil {
		return err
	}
	pool, target, err := cluster.Connect(res.Cluster, f.connectOptions(g, s))
	if err != nil {
		return err
	}
	defer pool.Close()
	return do(target)
}

func (f *sshFlags) connectOptions(g *globalOptions, s Streams) cluster.ConnectOptions {
	// Retries of a host's SSH go to stderr: stdout may carry -o json.
	o := cluster.ConnectOptions{TrustUnknownHosts: f.trustUnknownHosts, KnownHostsFile: f.knownHosts,
		ConnectTimeout: f.connectTimeout, Notices: s.Err}
	if g.verbose {
		o.Verbose = g.progress(s)
	}
	return o
}

// terminalConfirm asks on the terminal, or returns nil when stdin is not one.
func terminalConfirm(s Streams) func(string) (bool, error) {
	f, ok := s.In.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	return func(q string) (bool, error) {
		fmt.Fprintf(s.Out, "%s Only 'yes' continues: ", q)
		line, err := bufio.NewReader(s.In).ReadString('\n')
		if err != nil && err != io.EOF {
			return false, err
		}
		return strings.TrimSpace(line) == "yes", nil
	}
}
