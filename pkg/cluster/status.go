package cluster

import (
	"bufio"
	"context"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/slipway-dev/slipway/pkg/inventory"
	"github.com/slipway-dev/slipway/pkg/kube"
	"github.com/slipway-dev/slipway/pkg/kubeadm"
	"github.com/slipway-dev/slipway/pkg/plan"
	"github.com/slipway-dev/slipway/pkg/probe"
	"github.com/slipway-dev/slipway/pkg/scripts"
)

// CertificateWarning is how close to its expiry a certificate makes the cluster unhealthy: kubeadm
// renews them only on upgrades, and a cluster whose certificates expired stops working.
const CertificateWarning = 30 * 24 * time.Hour

// Status is what `slipway status` reports.
type Status struct {
	Cluster string `json:"cluster"`
	// Version is the control plane's Kubernetes version (kubeadm's ClusterConfiguration).
	Version string       `json:"version,omitempty"`
	Healthy bool         `json:"healthy"`
	Hosts   []HostStatus `json:"hosts"`
	Etcd    []EtcdStatus `json:"etcd,omitempty"`
	Pools   []PoolStatus `json:"pools,omitempty"`
	// Problems say, one a line, what makes the cluster unhealthy.
	Problems []string `json:"problems,omitempty"`

	// apiRead is true when the Nodes and pools were read: without them, no host is blamed for
	// a missing Node.
	apiRead bool
	// snapshotsWanted is true when the manifest schedules etcd snapshots.
	snapshotsWanted bool
}

// HostStatus is one host of the manifest.
type HostStatus struct {
	Name    string `json:"name"`
	Address string `json:"address"`
	Role    string `json:"role"`
	// Reachable is false when SSH to the host failed; Error says why.
	Reachable bool   `json:"reachable"`
	Error     string `json:"error,omitempty"`
	// Registered, Ready and Kubelet are the host's Node as the API reports it.
	Registered bool   `json:"registered"`
	Ready      bool   `json:"ready"`
	Kubelet    string `json:"kubelet,omitempty"`
	// API is what the host's own kube-apiserver answers on /readyz (control planes only): "ok",
	// an HTTP status, or "down".
	API string `json:"api,omitempty"`
	// Certificates are kubeadm's certificates on the host (control planes only), soonest
	// expiry first.
	Certificates []Certificate `json:"certificates,omitempty"`
	// Snapshots are the host's scheduled etcd snapshots (control planes with a snapshot timer,
	// or with etcd.snapshots in the manifest).
	Snapshots *SnapshotStatus `json:"snapshots,omitempty"`
}

// SnapshotStatus is what a control plane holds of the scheduled etcd snapshots.
type SnapshotStatus struct {
	// Scheduled is true when the host has the snapshot timer.
	Scheduled bool `json:"scheduled"`
	// LastRun is systemd's result of the last snapshot (success, exit-code, timeout...): success
	// before the first run too.
	LastRun string `json:"lastRun,omitempty"`
	// Newest is the newest snapshot file in scripts.SnapshotDir, and NewestAt when it was taken.
	Newest   string    `json:"newest,omitempty"`
	NewestAt time.Time `json:"newestAt,omitzero"`
}

// Certificate is one of kubeadm's certificates, in a PEM file or embedded in a kubeconfig.
type Certificate struct {
	File     string    `json:"file"`
	Subject  string    `json:"subject"`
	NotAfter time.Time `json:"notAfter"`
	CA       bool      `json:"ca,omitempty"`
}

// EtcdStatus is an etcd member.
type EtcdStatus struct {
	Name    string `json:"name"`
	PeerURL string `json:"peerURL"`
	// Healthy is true when the member answers; an active alarm makes the cluster unhealthy too.
	Healthy bool     `json:"healthy"`
	Alarms  []string `json:"alarms,omitempty"`
}

// PoolStatus is a worker pool (MachineDeployment in kube-system).
type PoolStatus struct {
	Name     string `json:"name"`
	Replicas int32  `json:"replicas"`
	Ready    int32  `json:"ready"`
	Settled  bool   `json:"settled"`
}

// StatusOptions configure ClusterStatus.
type StatusOptions struct {
	// Now is the time certificates are judged at (default time.Now).
	Now func() time.Time
}

// statusScript reports, on a control plane, what the local API server answers on /readyz and
// every certificate kubeadm made (files base64-encoded, one a line); on a worker, nothing.
var statusScript = fmt.Sprintf(`set -u
[ -f /etc/kubernetes/manifests/kube-apiserver.yaml ] || exit 0
code=$(curl -sk -o /dev/null -w '%%{http_code}' --max-time 5 https://127.0.0.1:%d/readyz 2>/dev/null) || code=000
echo "readyz $code"
for f in /etc/kubernetes/pki/*.crt /etc/kubernetes/pki/etcd/*.crt; do
  [ -f "$f" ] && printf 'file %%s %%s\n' "$f" "$(base64 -w0 "$f")"
done
# Only the client certificates of kubeadm's kubeconfigs: their keys stay on the host.
for f in /etc/kubernetes/*.conf; do
  [ -f "$f" ] || continue
  cert=$(awk '$1 == "client-certificate-data:" {print $2; exit}' "$f")
  [ -n "$cert" ] && printf 'file %%s %%s\n' "$f" "$cert"
done
if [ -f /etc/systemd/system/%[2]s.timer ]; then
  echo "snapshot-timer $(systemctl show -p Result --value %[2]s.service 2>/dev/null)"
  newest=$(find %[3]s -maxdepth 1 -type f -name '*.db' -printf '%%T@ %%f\n' 2>/dev/null | sort -n | tail -n 1)
  [ -n "$newest" ] && echo "snapshot-newest $newest"
fi
exit 0
`, kubeadm.APIServerBindPort, scripts.SnapshotUnit, scripts.SnapshotDir)

// ClusterStatus reads the health of every host of the manifest over SSH, and of the cluster
// through its API and etcd. It changes nothing. A host or an API that cannot be reached is part
// of the report, not an error: the error is for a status that could not be made at all.
func ClusterStatus(ctx context.Context, t *Target, opts StatusOptions) (*Status, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	st := &Status{Cluster: t.Manifest.Name, Hosts: make([]HostStatus, len(t.Nodes)), snapshotsWanted: t.Manifest.Etcd.Snapshots != nil}
	var wg sync.WaitGroup
	for i, n := range t.Nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st.Hosts[i] = hostStatus(ctx, t, n)
		}()
	}
	wg.Wait()

	api := t.access()
	defer api.Forget()
	var problems []string
	if c, err := api.Kube(ctx); err != nil {
		problems = append(problems, fmt.Sprintf("the Kubernetes API cannot be reached through any control plane: %v", err))
	} else if err := st.readCluster(ctx, c); err != nil {
		problems = append(problems, fmt.Sprintf("reading the cluster through its API: %v", err))
	} else {
		st.apiRead = true
	}
	if ec, err := api.Etcd(ctx); err != nil {
		problems = append(problems, fmt.Sprintf("etcd cannot be reached through any control plane: %v", err))
	} else {
		ms, err := ec.Members(ctx)
		ec.Close()
		if err != nil {
			problems = append(problems, fmt.Sprintf("listing etcd members: %v", err))
		}
		for _, m := range ms {
			peer := ""
			if len(m.PeerURLs) > 0 {
				peer = m.PeerURLs[0]
			}
			st.Etcd = append(st.Etcd, EtcdStatus{Name: m.Name, PeerURL: peer, Healthy: m.Healthy, Alarms: m.Alarms})
		}
	}
	if err := ctx.Err(); err != nil {
		// What an interrupted status found is not the cluster's health.
		return nil, fmt.Errorf("status interrupted: %w", err)
	}
	st.Problems = append(problems, st.judge(opts.Now())...)
	st.Healthy = len(st.Problems) == 0
	return st, nil
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// hostStatus reaches one host over SSH.
func hostStatus(ctx context.Context, t *Target, n *inventory.Node) HostStatus {
	hs := HostStatus{Name: n.Name, Address: n.Target.Address, Role: string(n.Role)}
	h := t.SSH.Host(n.Target)
	name, err := h.Command(ctx, "hostname").Output()
	if err != nil {
		hs.Error = err.Error()
		return hs
	}
	hs.Reachable = true
	if n.Provisional {
		hs.Name = strings.ToLower(strings.TrimSpace(string(name)))
	}
	if n.Role != plan.ControlPlane {
		return hs
	}
	out, err := h.Script(ctx, "status", statusScript).Output()
	if err != nil {
		hs.Error = err.Error()
		return hs
	}
	hs.API, hs.Certificates, err = parseStatusOutput(out)
	if err != nil {
		hs.Error = err.Error()
	}
	hs.Snapshots = parseSnapshotStatus(out)
	return hs
}

// parseSnapshotStatus reads the snapshot lines of what statusScript printed: nil when the host
// has no snapshot timer.
func parseSnapshotStatus(out []byte) *SnapshotStatus {
	var s *SnapshotStatus
	for _, line := range strings.Split(string(out), "\n") {
		kind, rest, _ := strings.Cut(line, " ")
		switch kind {
		case "snapshot-timer":
			if s == nil {
				s = &SnapshotStatus{}
			}
			s.Scheduled, s.LastRun = true, strings.TrimSpace(rest)
		case "snapshot-newest":
			if s == nil {
				s = &SnapshotStatus{}
			}
			stamp, name, _ := strings.Cut(rest, " ")
			if secs, err := strconv.ParseFloat(stamp, 64); err == nil {
				s.NewestAt = time.Unix(0, int64(secs*1e9)).UTC().Truncate(time.Second)
			}
			s.Newest = name
		}
	}
	return s
}

// parseStatusOutput reads what statusScript printed.
func parseStatusOutput(out []byte) (api string, certs []Certificate, err error) {
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	sc.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
	for sc.Scan() {
		kind, rest, _ := strings.Cut(sc.Text(), " ")
		switch kind {
		case "readyz":
			switch rest {
			case "200":
				api = "ok"
			case "000":
				api = "down"
			default:
				api = "HTTP " + rest
			}
		case "file":
			file, data, _ := strings.Cut(rest, " ")
			raw, derr := base64.StdEncoding.DecodeString(data)
			if derr != nil {
				return "", nil, fmt.Errorf("reading %s: %w", file, derr)
			}
			cs, cerr := certificatesIn(file, raw)
			if cerr != nil {
				return "", nil, cerr
			}
			certs = append(certs, cs...)
		}
	}
	sort.SliceStable(certs, func(i, j int) bool { return certs[i].NotAfter.Before(certs[j].NotAfter) })
	return api, certs, sc.Err()
}

// certificatesIn returns the certificate of a PEM file: one of kubeadm's certificates, or the
// client certificate a kubeadm kubeconfig (.conf) embeds, which is all the host sends of it.
func certificatesIn(file string, data []byte) ([]Certificate, error) {
	block, _ := pem.Decode(data)
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, fmt.Errorf("%s holds no PEM certificate", file)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("parsing %s: %w", file, err)
	}
	return []Certificate{{File: file, Subject: cert.Subject.CommonName, NotAfter: cert.NotAfter.UTC(), CA: cert.IsCA}}, nil
}

// readCluster reads the version, the Nodes and the worker pools.
func (st *Status) readCluster(ctx context.Context, c *kube.Client) error {
	if v, _, err := probe.ClusterVersion(ctx, c); err == nil {
		st.Version = v
	}
	nodes, err := c.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	byName := map[string]*corev1.Node{}
	for i := range nodes.Items {
		byName[nodes.Items[i].Name] = &nodes.Items[i]
	}
	for i := range st.Hosts {
		h := &st.Hosts[i]
		if n, ok := byName[h.Name]; ok {
			h.Registered, h.Ready, h.Kubelet = true, kube.NodeReady(n), n.Status.NodeInfo.KubeletVersion
		}
	}
	pools, err := probe.PoolStates(ctx, c)
	if err != nil {
		return err
	}
	for name, p := range pools {
		st.Pools = append(st.Pools, PoolStatus{Name: name, Replicas: p.Replicas, Ready: p.Ready, Settled: p.Settled})
	}
	sort.Slice(st.Pools, func(i, j int) bool { return st.Pools[i].Name < st.Pools[j].Name })
	return nil
}

// judge lists what is unhealthy.
func (st *Status) judge(now time.Time) []string {
	var out []string
	controlPlanes := 0
	for _, h := range st.Hosts {
		switch {
		case !h.Reachable:
			out = append(out, fmt.Sprintf("%s (%s) cannot be reached over SSH: %s", h.Name, h.Address, h.Error))
		case h.Error != "":
			out = append(out, fmt.Sprintf("%s: %s", h.Name, h.Error))
		}
		switch {
		case !st.apiRead:
			// Without the API, no host is blamed for a missing Node: its own problem is reported.
		case !h.Registered:
			out = append(out, fmt.Sprintf("%s has no Node in the cluster", h.Name))
		case !h.Ready:
			out = append(out, fmt.Sprintf("node %s is not Ready", h.Name))
		}
		if h.Role != string(plan.ControlPlane) {
			continue
		}
		controlPlanes++
		if h.Reachable && h.API != "ok" {
			out = append(out, fmt.Sprintf("the API server on %s is not ready (/readyz: %s)", h.Name, orUnknown(h.API)))
		}
		out = append(out, expiring(h.Name, h.Certificates, now)...)
		out = append(out, st.snapshotProblems(h)...)
	}
	for _, m := range st.Etcd {
		if !m.Healthy {
			out = append(out, fmt.Sprintf("etcd member %s (%s) is not healthy", m.Name, m.PeerURL))
		}
		for _, a := range m.Alarms {
			out = append(out, fmt.Sprintf("etcd member %s has the alarm %s: %s", m.Name, a, alarmAdvice(a)))
		}
	}
	if st.Etcd != nil && len(st.Etcd) != controlPlanes {
		out = append(out, fmt.Sprintf("etcd has %d members for %d control planes", len(st.Etcd), controlPlanes))
	}
	for _, p := range st.Pools {
		if p.Ready < p.Replicas {
			out = append(out, fmt.Sprintf("worker pool %s has %d of %d machines ready", p.Name, p.Ready, p.Replicas))
		}
	}
	return out
}

// snapshotProblems says what is wrong with a reachable control plane's scheduled snapshots.
func (st *Status) snapshotProblems(h HostStatus) []string {
	s := h.Snapshots
	switch {
	case !h.Reachable || h.Error != "":
		return nil
	case st.snapshotsWanted && (s == nil || !s.Scheduled):
		return []string{fmt.Sprintf("etcd.snapshots is set, but %s has no snapshot timer: run slipway apply", h.Name)}
	case s != nil && s.Scheduled && s.LastRun != "" && s.LastRun != "success":
		return []string{fmt.Sprintf("the last scheduled etcd snapshot on %s failed (%s): see journalctl -u %s.service on the host", h.Name, s.LastRun, scripts.SnapshotUnit)}
	}
	return nil
}

// PrintStatus writes st as tables, or as JSON.
func PrintStatus(w io.Writer, st *Status, asJSON bool, now time.Time) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(st)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "cluster %s, Kubernetes %s\n\n", st.Cluster, orUnknown(st.Version))
	fmt.Fprintln(tw, "HOST\tADDRESS\tROLE\tSSH\tNODE\tKUBELET\tAPI\tCERTIFICATES\tETCD SNAPSHOT")
	for _, h := range st.Hosts {
		ssh, node, certs, snap := "ok", "missing", "", ""
		if !h.Reachable {
			ssh = "unreachable"
		}
		if h.Registered {
			node = "NotReady"
			if h.Ready {
				node = "Ready"
			}
		}
		if len(h.Certificates) > 0 {
			c := h.Certificates[0]
			certs = fmt.Sprintf("first expiry %s (%s, in %dd)", c.NotAfter.Format(time.DateOnly), path.Base(c.File), int(c.NotAfter.Sub(now).Hours()/24))
		}
		if s := h.Snapshots; s != nil {
			snap = "none yet"
			if !s.NewestAt.IsZero() {
				snap = fmt.Sprintf("%s ago", now.Sub(s.NewestAt).Round(time.Second))
			}
			if s.LastRun != "" && s.LastRun != "success" {
				snap += ", last run " + s.LastRun
			}
			if !s.Scheduled {
				snap += ", not scheduled"
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", h.Name, h.Address, h.Role, ssh, node, dash(h.Kubelet), dash(h.API), dash(certs), dash(snap))
	}
	if len(st.Etcd) > 0 {
		fmt.Fprintln(tw, "\nETCD MEMBER\tPEER URL\tHEALTHY\tALARMS")
		for _, m := range st.Etcd {
			fmt.Fprintf(tw, "%s\t%s\t%t\t%s\n", m.Name, m.PeerURL, m.Healthy, dash(strings.Join(m.Alarms, ",")))
		}
	}
	if len(st.Pools) > 0 {
		fmt.Fprintln(tw, "\nPOOL\tREPLICAS\tREADY\tSETTLED")
		for _, p := range st.Pools {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%t\n", p.Name, p.Replicas, p.Ready, p.Settled)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if st.Healthy {
		_, err := fmt.Fprintln(w, "\nhealthy")
		return err
	}
	_, err := fmt.Fprintf(w, "\nunhealthy:\n  - %s\n", strings.Join(st.Problems, "\n  - "))
	return err
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// expiring says which of a host's certificates expire within CertificateWarning, or have.
func expiring(host string, certs []Certificate, now time.Time) []string {
	var out []string
	for _, c := range certs {
		if left := c.NotAfter.Sub(now); left < CertificateWarning {
			what := fmt.Sprintf("expires in %s", left.Round(time.Hour))
			if left <= 0 {
				what = "has expired"
			}
			out = append(out, fmt.Sprintf("certificate %s (%s) on %s %s, on %s: renew it", c.File, c.Subject, host, what, c.NotAfter.Format(time.DateOnly)))
		}
	}
	return out
}

// HostCertificates are one control plane's kubeadm certificates.
type HostCertificates struct {
	Host         string        `json:"host"`
	Error        string        `json:"error,omitempty"`
	Certificates []Certificate `json:"certificates"`
}

// CertificateExpiry reads kubeadm's certificates on every control plane over SSH, soonest
// expiry first per host. A host that cannot be read is reported with its error.
func CertificateExpiry(ctx context.Context, t *Target) []HostCertificates {
	var out []HostCertificates
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, n := range t.Nodes {
		if n.Role != plan.ControlPlane {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			hs := hostStatus(ctx, t, n)
			mu.Lock()
			out = append(out, HostCertificates{Host: hs.Name, Error: hs.Error, Certificates: hs.Certificates})
			mu.Unlock()
		}()
	}
	wg.Wait()
	sort.Slice(out, func(i, j int) bool { return out[i].Host < out[j].Host })
	return out
}

// PrintCertificates writes the certificates as a table (or JSON), and returns the problems: a
// host that could not be read, or a certificate that expires within CertificateWarning.
func PrintCertificates(w io.Writer, hosts []HostCertificates, asJSON bool, now time.Time) ([]string, error) {
	var problems []string
	for _, h := range hosts {
		if h.Error != "" {
			problems = append(problems, fmt.Sprintf("%s: %s", h.Host, h.Error))
		}
		for _, c := range h.Certificates {
			if c.NotAfter.Sub(now) < CertificateWarning {
				problems = append(problems, fmt.Sprintf("certificate %s on %s expires on %s", c.File, h.Host, c.NotAfter.Format(time.DateOnly)))
			}
		}
	}
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return problems, enc.Encode(hosts)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "HOST\tCERTIFICATE\tSUBJECT\tEXPIRES\tRESIDUAL\tCA")
	for _, h := range hosts {
		if h.Error != "" {
			fmt.Fprintf(tw, "%s\t(unreadable: %s)\t\t\t\t\n", h.Host, h.Error)
		}
		for _, c := range h.Certificates {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%dd\t%t\n", h.Host, c.File, c.Subject, c.NotAfter.Format(time.DateOnly), int(c.NotAfter.Sub(now).Hours()/24), c.CA)
		}
	}
	return problems, tw.Flush()
}
