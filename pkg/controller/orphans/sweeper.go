package orphans

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/cloud"
	"github.com/slipway-dev/slipway/pkg/controller/internal/cloudtrack"
	"github.com/slipway-dev/slipway/pkg/controller/internal/leftovers"
	"github.com/slipway-dev/slipway/pkg/controller/internal/machineutil"
)

// Options tune the orphan sweep.
type Options struct {
	// Namespace, when set, confines the sweep to the leftovers of that namespace's Machines: it
	// then deletes nothing it finds in the cloud's listing, which Machines elsewhere may own.
	Namespace string
	// LeftoverNamespace holds the ConfigMap that records servers left behind by forced deletions.
	LeftoverNamespace string
	// OrphanSweepInterval is how often servers without a Machine are looked for.
	OrphanSweepInterval time.Duration
	// OrphanGracePeriod is how long a server must have been seen without a Machine before the
	// sweep deletes it, so that creates still in flight are never swept.
	OrphanGracePeriod time.Duration
}

// Sweeper deletes servers that carry the cluster's tag but belong to no Machine: left by a
// forced deletion, or by a crash between a create and its bookkeeping. It runs on the leader only.
type Sweeper struct {
	client client.Client
	reader client.Reader
	cloud  *cloudtrack.Provider
	opts   Options
	log    logr.Logger

	firstSeen map[string]time.Time // Machine UID → when its server was first seen orphaned
}

// NewSweeper returns the orphan sweep, to be added to the manager as a Runnable. reader must be
// uncached (ConfigMaps are never cached).
func NewSweeper(c client.Client, reader client.Reader, cloud *cloudtrack.Provider, opts Options, log logr.Logger) *Sweeper {
	return &Sweeper{client: c, reader: reader, cloud: cloud, opts: opts, log: log, firstSeen: map[string]time.Time{}}
}

// NeedLeaderElection makes the sweep run on the leader only.
func (s *Sweeper) NeedLeaderElection() bool { return true }

// Start sweeps every OrphanSweepInterval until ctx ends.
func (s *Sweeper) Start(ctx context.Context) error {
	t := time.NewTicker(s.opts.OrphanSweepInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			if err := s.sweep(ctx); err != nil {
				s.log.Error(err, "orphan sweep")
			}
		}
	}
}

// sweep releases what forced deletions recorded, then lists the servers of every account a
// Machine template points at and deletes the orphans.
func (s *Sweeper) sweep(ctx context.Context) error {
	var machines v1alpha1.MachineList
	if err := s.client.List(ctx, &machines); err != nil {
		return err
	}
	var sets v1alpha1.MachineSetList
	if err := s.client.List(ctx, &sets); err != nil {
		return err
	}
	left, err := leftovers.Load(ctx, s.reader, s.opts.LeftoverNamespace)
	if err != nil {
		return err
	}
	for uid, m := range left {
		if s.opts.Namespace != "" && m.Namespace != s.opts.Namespace {
			delete(left, uid) // another controller's forced deletion, in another account maybe
		}
	}
	errs := []error{s.releaseLeftovers(ctx, left, s.rerecord, func(ctx context.Context, uid string) error {
		return leftovers.Forget(ctx, s.client, s.reader, s.opts.LeftoverNamespace, uid)
	})}
	live := map[string]bool{}
	templates := map[string]*v1alpha1.Machine{}
	addTemplate := func(m *v1alpha1.Machine) {
		if m.Spec.ProviderSpec.Value != nil {
			templates[string(m.Spec.ProviderSpec.Value.Raw)] = m
		}
	}
	for i := range machines.Items {
		live[string(machines.Items[i].UID)] = true
		addTemplate(&machines.Items[i])
	}
	for i := range sets.Items {
		addTemplate(&v1alpha1.Machine{Spec: sets.Items[i].Spec.Template.Spec})
	}
	for uid, m := range left {
		// Released above, from the record; a second Delete from the listing would only
		// repeat that one with less to go on.
		live[uid] = true
		addTemplate(m)
	}
	seen := map[string]bool{}
	for _, tmpl := range templates {
		insts, err := s.cloud.List(ctx, tmpl)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, inst := range orphans(insts, live, func(uid string) bool { return s.cloud.Creating(types.UID(uid)) },
			s.firstSeen, seen, time.Now(), s.opts.OrphanGracePeriod) {
			if s.opts.Namespace != "" {
				// Confined to one namespace, this controller cannot see Machines elsewhere that
				// may own the server; it only releases what its own forced deletions left.
				continue
			}
			m := &v1alpha1.Machine{Spec: tmpl.Spec}
			m.Name, m.UID, m.Spec.ProviderID = inst.Name, types.UID(inst.MachineUID), machineutil.PtrTo(inst.ProviderID)
			done, err := s.cloud.Delete(ctx, m, func(context.Context, func(*v1alpha1.Machine)) error { return nil })
			if err != nil {
				errs = append(errs, err)
				continue
			}
			s.log.Info("deleting orphaned server", "server", inst.ID, "name", inst.Name, "machineUID", inst.MachineUID, "gone", done)
		}
	}
	for uid := range s.firstSeen {
		if !seen[uid] {
			delete(s.firstSeen, uid)
		}
	}
	return errors.Join(errs...)
}

// releaseLeftovers calls Delete for every recorded leftover, whether or not the cloud still
// lists its server: a stuck server may vanish by itself and leave its port, floating IPs and
// volumes behind, which only the provider's Delete, given the record, knows to release. A
// record is forgotten only once Delete reports everything gone. update persists what Delete
// learns on the way into the record.
func (s *Sweeper) releaseLeftovers(ctx context.Context, left map[string]*v1alpha1.Machine,
	update func(*v1alpha1.Machine) cloud.MachineUpdater, forget func(context.Context, string) error) error {
	var errs []error
	for uid, m := range left {
		done, err := s.cloud.Delete(ctx, m, update(m))
		if err != nil {
			errs = append(errs, fmt.Errorf("releasing the leftovers of machine %s/%s: %w", m.Namespace, m.Name, err))
			continue
		}
		s.log.Info("releasing the leftovers of a forced deletion", "machine", m.Namespace+"/"+m.Name, "machineUID", uid, "gone", done)
		if done {
			errs = append(errs, forget(ctx, uid))
		}
	}
	return errors.Join(errs...)
}

// rerecord is the MachineUpdater for a recorded leftover: the provider's changes go into the
// record, so that a restarted controller resumes from what is still allocated.
func (s *Sweeper) rerecord(m *v1alpha1.Machine) cloud.MachineUpdater {
	return func(ctx context.Context, mutate func(*v1alpha1.Machine)) error {
		mutate(m)
		return leftovers.Record(ctx, s.client, s.reader, s.opts.LeftoverNamespace, m)
	}
}

// orphans returns the servers that have had no Machine for at least grace. A server whose Machine
// has a Create in flight is never an orphan, nor one without a Machine UID (it is not ours to
// judge). firstSeen remembers when each orphan was first noticed; seen collects the UIDs noticed
// this sweep, so that the caller can forget the rest.
func orphans(insts []cloud.Instance, live map[string]bool, creating func(string) bool,
	firstSeen map[string]time.Time, seen map[string]bool, now time.Time, grace time.Duration) []cloud.Instance {
	var out []cloud.Instance
	for _, inst := range insts {
		uid := inst.MachineUID
		if uid == "" || live[uid] || creating(uid) {
			continue
		}
		seen[uid] = true
		first, ok := firstSeen[uid]
		if !ok {
			firstSeen[uid] = now
			first = now
		}
		if now.Sub(first) >= grace {
			out = append(out, inst)
		}
	}
	return out
}
