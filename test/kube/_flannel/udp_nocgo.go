// This file is not part of Slipway's module (Go ignores directories starting with "_"): the
// sandbox's flanneld build (test/kube/flannel.sh) adds it to flannel's pkg/backend/udp through
// `go build -overlay` when building without cgo.
//
// The UDP backend forwards packets with a C loop; the only cgo in flanneld. Without cgo these
// stand-ins keep the package compiling. Selecting the udp backend then stops flanneld with a
// clear message instead of starting a network that drops every packet; vxlan and host-gw are
// pure Go and unaffected.

//go:build !cgo

package udp

import (
	"net"
	"os"

	"github.com/flannel-io/flannel/pkg/ip"
	log "k8s.io/klog/v2"
)

func runCProxy(_ *os.File, _ *net.UDPConn, _ *os.File, _ ip.IP4, _ int) {
	log.Exit("this flanneld was built without cgo and has no udp backend: use the vxlan or host-gw backend")
}

func setRoute(*os.File, ip.IP4Net, ip.IP4, int) {}

func removeRoute(*os.File, ip.IP4Net) {}

func stopProxy(*os.File) {}
