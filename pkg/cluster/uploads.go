package cluster

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/scripts"
)

// checkUploads stops apply before anything changes when the manifest's assets are uploaded
// (assets.upload) and the directory lacks a file that a host will need: kubeadm, kubelet and
// kubectl where a host lacks the manifest's version of one of them, and containerd's release
// tarball for the host's architecture where its containerd is too old for that version.
// Checksum files stay optional. The error names each missing file and the hosts that need it.
func checkUploads(c *v1beta1.Cluster, facts map[string]scripts.Facts) error {
	up := c.Assets.Upload
	if up == nil {
		return nil
	}
	version := "v" + strings.TrimPrefix(c.Versions.Kubernetes, "v")
	needs := map[string][]string{} // file name → hosts
	for host, f := range facts {
		for _, b := range []struct{ name, have string }{{"kubeadm", f.KubeadmVersion}, {"kubelet", f.KubeletVersion}, {"kubectl", f.KubectlVersion}} {
			if b.have != version {
				needs[b.name] = append(needs[b.name], host)
			}
		}
		rel, err := scripts.ContainerdUploadFor(c, f)
		if err != nil {
			return fmt.Errorf("%s: %w", host, err)
		}
		if rel.Needed {
			needs[rel.Tarball] = append(needs[rel.Tarball], host)
		}
	}
	var missing []string
	for file, hosts := range needs {
		p := filepath.Join(up.Directory, file)
		st, err := os.Stat(p)
		if err == nil && st.Mode().IsRegular() {
			continue
		}
		sort.Strings(hosts)
		why := "is missing"
		if err == nil {
			why = "is not a regular file"
		} else if !os.IsNotExist(err) {
			why = "cannot be read: " + err.Error()
		}
		missing = append(missing, fmt.Sprintf("%s %s (needed by %s)", file, why, strings.Join(hosts, ", ")))
	}
	if len(missing) == 0 {
		return nil
	}
	sort.Strings(missing)
	hint := ""
	if strings.Contains(strings.Join(missing, " "), "containerd-") {
		hint = "; containerd's release comes from https://github.com/containerd/containerd/releases (its .sha256sum beside it is checked when present)"
	}
	return fmt.Errorf("assets.upload.directory %s: %s%s; nothing was changed", up.Directory, strings.Join(missing, "; "), hint)
}
