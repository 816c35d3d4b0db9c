package sandboxapi

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/slipway-dev/slipway/test/sandbox/artifacts"
	"golang.org/x/crypto/ssh"
)

// upRun carries one Up's intermediate results from step to step.
type upRun struct {
	opts   Options
	set    *artifacts.Set
	assetd string
	sb     *Sandbox
	signer ssh.Signer
}

func (u *upRun) prepare(ctx context.Context) error {
	set, err := artifacts.Prepare(ctx, artifacts.Options{
		Versions: u.opts.Versions, Cache: u.opts.Cache, Root: u.opts.Root, ExactCoreDNS: u.opts.ExactCoreDNS, SlipwayVersion: u.opts.SlipwayVersion, Log: u.opts.Log,
	})
	u.set = set
	return err
}

// buildAssetd builds the static server binary that the assets container runs. Go's build cache
// makes this about a second when nothing changed.
func (u *upRun) buildAssetd(ctx context.Context) error {
	u.assetd = filepath.Join(u.opts.Dir, "bin", "assetd")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", u.assetd, "./test/sandbox/assetd")
	cmd.Dir = u.opts.Root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build ./test/sandbox/assetd: %w: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

// newState plans hosts and addresses and loads or creates the SSH user key.
func (u *upRun) newState(ctx context.Context) error {
	o := u.opts
	subnet, err := parseSubnet(o.Subnet)
	if err != nil {
		return err
	}
	hosts, err := plan(o.Name, subnet, o.Hosts, o.ControlPlanes, o.LB)
	if err != nil {
		return err
	}
	assetsIP := addr(subnet, assetsOctet)
	u.sb = &Sandbox{Dir: o.Dir, State: State{
		Name: o.Name, Network: "slipway-" + o.Name, Subnet: subnet.String(),
		Image: u.set.NodeImage, Privileged: canSetResources(), CgroupV1: CgroupV1(),
		Assets: Assets{
			IP:         assetsIP,
			Registry:   "http://" + assetsIP + ":5000",
			Files:      "http://" + assetsIP + ":8080",
			ResolvConf: "/etc/resolv.upstream.conf",
		},
		Versions: o.Versions, Kubernetes: o.Kubernetes, Hosts: hosts,
		Endpoint: hosts[0].IP + ":6443", Pool: o.Pool,
	}}
	if o.LB {
		u.sb.Endpoint = addr(subnet, lbOctet) + ":6443"
	}
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return err
	}
	u.signer, _, err = keyPair(u.sb.Path(KeyFile), "slipway-sandbox-"+o.Name)
	return err
}

// containers creates or keeps the assets container and every planned host, all at once (Docker
// creates containers in parallel well, and serially 5 hosts took 13 s), then removes containers
// of hosts no longer planned (up --hosts 2 after up --hosts 4).
func (u *upRun) containers(ctx context.Context) error {
	specs := []spec{}
	s, err := u.assetsSpec()
	if err != nil {
		return err
	}
	specs = append(specs, s)
	userPub := authorizedKey(u.signer.PublicKey(), "slipway-sandbox-"+u.sb.Name)
	for i := range u.sb.Hosts {
		h := &u.sb.Hosts[i]
		if h.Role == LoadBalancer {
			specs = append(specs, u.sb.lbSpec(*h, u.sb.hostsWith(ControlPlane)))
			continue
		}
		id, err := u.sb.identity(h)
		if err != nil {
			return err
		}
		specs = append(specs, u.sb.nodeSpec(*h, identityFiles(id.key, id.pub, id.machineID, userPub)))
	}
	keep := map[string]bool{}
	errs := make([]error, len(specs))
	var wg sync.WaitGroup
	for i, s := range specs {
		keep[s.name] = true
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = u.sb.ensure(ctx, s)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return u.sb.removeExcept(ctx, keep)
}

// assetsSpec is the assets container serving this run's artifacts.
func (u *upRun) assetsSpec() (spec, error) {
	layouts := []string{u.set.Addons, u.set.Slipway}
	routes := map[string]string{}
	for _, r := range u.set.Releases {
		layouts = append(layouts, r.Layout)
		routes["/release/"+r.Version+"/"] = r.ReleaseDir
		routes["/core:/stable:/"+r.Minor+"/deb/"] = r.AptRepo
		routes["/cri-tools/releases/download/"+r.CriTools+"/"] = r.CrictlDir
	}
	routes[ContainerdReleasePath+"/v"+artifacts.ContainerdVersion+"/"] = u.set.ContainerdDir
	s := u.sb.assetsSpec(u.opts.Cache, u.assetd, layouts, routes)
	sum, err := fileSum(u.assetd)
	if err != nil {
		return spec{}, err
	}
	// A rebuilt assetd must replace the running one: its digest is part of the spec.
	s.run = append(s.run, "-e", "ASSETD_SHA256="+sum)
	return s, nil
}

func (u *upRun) wait(ctx context.Context) error { return u.sb.WaitReady(ctx, u.signer) }

func fileSum(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
