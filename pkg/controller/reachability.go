package controller

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"

	"github.com/slipway-dev/slipway/pkg/controller/internal/cloudtrack"
)

// replacementFrozen returns the health controller's freeze: a function that says why
// health-based replacement is frozen, or "" when it is not. Replacement freezes while the API
// server does not answer the probe or the cloud did not answer the provider's last few calls:
// Nodes then look NotReady for reasons no new Machine would fix. The function keeps the
// machine_controller_health_replacement_frozen gauge up to date.
func replacementFrozen(probe *apiProbe, tracked *cloudtrack.Provider) func() string {
	return func() string {
		switch {
		case !probe.Reachable():
			healthFrozen.Set(1)
			return "the API server is unreachable"
		case !tracked.Reachable():
			healthFrozen.Set(1)
			return "the cloud API is unreachable"
		}
		healthFrozen.Set(0)
		return ""
	}
}

// apiProbe checks the API server's /readyz, so that health-based replacement freezes while the
// control plane is down: Nodes then look NotReady for reasons no new Machine would fix.
type apiProbe struct {
	client   rest.Interface
	interval time.Duration
	log      logr.Logger
	failing  atomic.Int32
}

// NeedLeaderElection lets every replica probe, so a new leader starts with a fresh answer.
func (p *apiProbe) NeedLeaderElection() bool { return false }

func (p *apiProbe) Start(ctx context.Context) error {
	t := time.NewTicker(p.interval)
	defer t.Stop()
	for {
		p.probe(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

func (p *apiProbe) probe(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, p.interval)
	defer cancel()
	if err := p.client.Get().AbsPath("/readyz").Do(ctx).Error(); err != nil {
		if p.failing.Add(1) == cloudtrack.UnreachableAfter {
			p.log.Error(err, "API server unreachable; freezing health-based replacement")
		}
		return
	}
	p.failing.Store(0)
}

// Reachable reports whether the API server answered one of the last few probes.
func (p *apiProbe) Reachable() bool { return p.failing.Load() < cloudtrack.UnreachableAfter }
