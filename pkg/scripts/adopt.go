package scripts

import (
	"fmt"
	"net"
	"path"
)

// adoptData is what the adopt script needs: slipway's directory and the kubelet resolver's
// inputs, under the names the shared kubelet-resolver template reads.
type adoptData struct {
	Dir         string
	ResolvConf  string
	UpstreamDNS []string
}

// Adopt returns the script that takes over a host another tool (kubeadm by hand, KubeOne)
// prepared and joined: it adds only what slipway's own configuration refers to, slipway's
// directory and KubeletResolvConf (an upgrade points the kubelets there), exactly as the
// prerequisites make them, and leaves containerd, the packages, swap, the kernel modules and
// the sysctls alone. upstreamDNS are clusterNetwork.upstreamDNS.
func Adopt(os OS, upstreamDNS []string) (string, error) {
	family, err := FamilyOf(os)
	if err != nil {
		return "", err
	}
	for _, s := range upstreamDNS {
		if net.ParseIP(s) == nil {
			return "", fmt.Errorf("upstream DNS server %q is not an IP address", s)
		}
	}
	d := adoptData{Dir: path.Dir(KubeletResolvConf), ResolvConf: KubeletResolvConf, UpstreamDNS: upstreamDNS}
	return render("adopt", "slipway's directory and the kubelet's resolver file on a host another tool prepared", family, d)
}
