package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/slipway-dev/slipway/pkg/access"
	"github.com/slipway-dev/slipway/pkg/internal/plural"
	"github.com/slipway-dev/slipway/pkg/inventory"
	"github.com/slipway-dev/slipway/pkg/phases"
	"github.com/slipway-dev/slipway/pkg/plan"
	"github.com/slipway-dev/slipway/pkg/probe"
	"github.com/slipway-dev/slipway/pkg/workers"
)

// ApplyOptions are apply's flags.
type ApplyOptions struct {
	DryRun      bool
	AutoApprove bool
	// Confirm asks the user; nil means stdin is not a terminal, so apply refuses without
	// AutoApprove.
	Confirm func(question string) (bool, error)
	// JSON prints the plan as JSON instead of text.
	JSON bool
	// Parallel bounds how many hosts are probed and worked on at once.
	Parallel int
	// UpgradeMachineDeployments bumps the kubelet version of existing MachineDeployments.
	UpgradeMachineDeployments bool
	// WaitPools waits, after the plan's other steps, until every worker pool's Machines are
	// Ready Nodes, for at most PoolTimeout (0: phases.DefaultPoolTimeout).
	WaitPools   bool
	PoolTimeout time.Duration
	// RenewCertificates renews kubeadm's certificates on every control plane after the plan
	// (RenewCertificates, as slipway certificates renew does).
	RenewCertificates bool
	// RotateEncryptionKey rotates the key that encrypts Secrets at rest (a plan step, see
	// plan.StepRotateKey).
	RotateEncryptionKey bool
	// Restore makes the cluster again from an etcd snapshot and a PKI backup (LoadRestore) on
	// control planes that are all fresh: apply --restore-from. Nil for every other apply.
	Restore *phases.Restore
	// KillAt is the interruption test hook (see phases.Runner.KillAt).
	KillAt string
	// Out receives the plan; Log receives progress (they differ when the plan is JSON).
	Out io.Writer
	Log io.Writer
}

// ErrNotConfirmed is returned when the user declines the plan.
var ErrNotConfirmed = errors.New("apply cancelled: the plan was not confirmed")

// Apply converges the cluster: read this machine's inputs (ReadInputs), lock, probe, render the
// desired state, plan, confirm, run the plan's phases, save the kubeconfig and, the first time, a
// backup of the CAs and keys. The inputs come first, so that a bad one stops the run before any
// host is reached; the lock comes next, so that the plan is built from what no other run is
// changing; a dry run changes nothing and takes no lock.
func Apply(ctx context.Context, t *Target, opts ApplyOptions) (err error) {
	if opts.Log == nil {
		opts.Log = opts.Out
	}
	// Files and variables of this machine are checked before any host is reached.
	inputs, err := readInputs(t.Manifest)
	if err != nil {
		return err
	}
	if !opts.DryRun {
		var unlock func()
		if ctx, unlock, err = lockLeader(ctx, t, opts.Log); err != nil {
			return err
		}
		defer unlock()
		defer func() { err = lockLostCause(ctx, err) }()
	}
	api := t.access()
	fmt.Fprintf(opts.Log, "Probing %s...\n", plural.Count(len(t.Nodes), "host"))
	observed, err := probe.All(ctx, probe.Input{Nodes: t.Nodes, SSH: t.SSH, API: api, Parallel: opts.Parallel, Log: opts.Log,
		AddonSet: t.Manifest.Name, AddonKinds: addonKinds(inputs.Addons)})
	if err != nil {
		return err
	}
	if err := checkCgroups(t.Manifest, observed.Facts, opts.Log); err != nil {
		return err
	}
	if err := checkUploads(t.Manifest, observed.Facts); err != nil {
		return err
	}
	warnExpiring(ctx, t, opts.RenewCertificates, opts.Log)
	warnAlarms(observed.State.Cluster.Etcd, opts.Log)
	desired, err := Desire(t.Manifest, inputs, observed, opts.UpgradeMachineDeployments)
	if err != nil {
		return err
	}
	desired.Plan.NoPoolWait = !opts.WaitPools
	desired.Plan.RotateEncryptionKey = opts.RotateEncryptionKey
	if opts.Restore != nil {
		desired.Plan.Restore = true
	}
	p, err := plan.Build(desired.Plan, observed.State)
	if err != nil {
		return err
	}
	if opts.JSON {
		if err := printJSON(opts.Out, p); err != nil {
			return err
		}
	} else {
		plan.Print(opts.Out, t.Manifest.Name, desired.Plan.Version, p)
	}
	if opts.DryRun {
		return nil
	}
	if !p.Empty() {
		if err := confirm(opts.AutoApprove, opts.Confirm); err != nil {
			return err
		}
		run := phases.NewRun(phases.Config{
			Manifest: t.Manifest, Nodes: observed.Nodes, Facts: observed.Facts,
			SSH: t.SSH, API: api, Rendered: desired.Rendered, Log: opts.Log, Secrets: t.Secrets,
			PoolTimeout: opts.PoolTimeout, Restore: opts.Restore,
		})
		x := &phases.Runner{Parallel: opts.Parallel, KillAt: opts.KillAt}
		if err := x.Run(ctx, run, p); err != nil {
			var stepErr *phases.Error
			if opts.JSON && errors.As(err, &stepErr) && stepErr.Step == plan.StepWaitPools {
				// Automation gets the pools as the wait left them, along with the error.
				_ = printPools(ctx, api.Kube, workers.Namespace, desired.Rendered, opts.Out)
			}
			return err
		}
	}
	if opts.JSON {
		if err := printPools(ctx, api.Kube, workers.Namespace, desired.Rendered, opts.Out); err != nil {
			return err
		}
	}
	if opts.RenewCertificates {
		fmt.Fprintln(opts.Log, "Renewing kubeadm's certificates, one control plane at a time...")
		if _, err := RenewCertificates(ctx, t, func(host, stage string, elapsed time.Duration) {
			fmt.Fprintf(opts.Log, "[%s] %s (%.1fs)\n", host, stage, elapsed.Seconds())
		}); err != nil {
			return err
		}
	}
	if err := saveKubeconfig(ctx, api, t.Manifest.Name, opts.Log); err != nil {
		return err
	}
	return savePKIBackup(ctx, t, time.Now(), opts.Log)
}

// warnExpiring warns of kubeadm certificates that expire within CertificateWarning: kubeadm
// renews them only on upgrades, and a cluster whose certificates expired stops working.
// A control plane that cannot be read is the probe's concern, not this warning's.
func warnExpiring(ctx context.Context, t *Target, renewing bool, log io.Writer) {
	var warnings []string
	for _, h := range CertificateExpiry(ctx, t) {
		warnings = append(warnings, expiring(h.Host, h.Certificates, time.Now())...)
	}
	for _, w := range warnings {
		fmt.Fprintf(log, "Warning: %s\n", w)
	}
	if len(warnings) > 0 && !renewing {
		fmt.Fprintln(log, "  slipway certificates renew renews them without downtime (or apply --renew-certificates, after the plan)")
	}
}

// warnAlarms warns of active etcd alarms: with NOSPACE the cluster refuses every write, so the
// steps that change it would fail.
func warnAlarms(members []plan.EtcdMember, log io.Writer) {
	alarmed := false
	for _, m := range members {
		for _, a := range m.Alarms {
			fmt.Fprintf(log, "Warning: etcd member %s has the %s alarm\n", m.Name, a)
			alarmed = true
		}
	}
	if alarmed {
		fmt.Fprintln(log, "  while an alarm is active etcd refuses writes, and steps that change the cluster fail; see slipway etcd disarm --help")
	}
}

// lockLeader takes the apply lock on the manifest's leader.
func lockLeader(ctx context.Context, t *Target, log io.Writer) (context.Context, func(), error) {
	leader := inventory.Leader(t.Nodes)
	if leader == nil {
		return nil, nil, errors.New("the manifest has no leader")
	}
	return Lock(ctx, leader.Name, t.SSH.Host(leader.Target), log)
}

// lockLostCause reports a run stopped because its lock was lost as that, not as an
// interruption.
func lockLostCause(ctx context.Context, err error) error {
	if cause := context.Cause(ctx); err != nil && errors.Is(cause, ErrLockLost) {
		return fmt.Errorf("%w (stopped: %v)", cause, err)
	}
	return err
}

// confirm asks before anything changes, unless autoApprove.
func confirm(autoApprove bool, ask func(string) (bool, error)) error {
	if autoApprove {
		return nil
	}
	if ask == nil {
		return errors.New("refusing to change the cluster without confirmation: stdin is not a terminal; review the plan (--dry-run) and pass --auto-approve")
	}
	ok, err := ask("Apply this plan?")
	if err != nil {
		return err
	}
	if !ok {
		return ErrNotConfirmed
	}
	return nil
}

func saveKubeconfig(ctx context.Context, api *access.Cluster, clusterName string, out io.Writer) error {
	data, err := fetchKubeconfig(ctx, api)
	if err != nil {
		return err
	}
	path := KubeconfigPath(clusterName)
	changed, err := WriteKubeconfig(path, data)
	if err != nil {
		return err
	}
	if changed {
		fmt.Fprintf(out, "Kubeconfig written to %s (mode 0600). Try: kubectl --kubeconfig %s get nodes\n", path, path)
	}
	return nil
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
