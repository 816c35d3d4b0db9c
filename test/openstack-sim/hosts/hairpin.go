package hosts

import (
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"

	"github.com/slipway-dev/slipway/test/sandbox/sandboxapi"
)

// hairpin lets a host reach its own floating IP: the NAT rules send such a packet back out of
// the bridge port it came in on, which a bridge only does for a port in hairpin mode. Docker
// makes new veth pairs at every start, so this runs after each one.
func (b *Backend) hairpin(ctx context.Context, container string) error {
	out, err := sandboxapi.Docker(ctx, "exec", container, "sh", "-c", "cat /sys/class/net/eth*/iflink")
	if err != nil {
		return fmt.Errorf("finding the interfaces of %s: %w", container, err)
	}
	for _, l := range sandboxapi.Lines(out) {
		idx, err := strconv.Atoi(strings.TrimSpace(l))
		if err != nil {
			return fmt.Errorf("interface index %q of %s: %w", l, container, err)
		}
		peer, err := net.InterfaceByIndex(idx)
		if err != nil {
			return fmt.Errorf("the host side of an interface of %s: %w", container, err)
		}
		if err := os.WriteFile("/sys/class/net/"+peer.Name+"/brport/hairpin_mode", []byte("1"), 0o644); err != nil {
			return fmt.Errorf("hairpin mode on %s (%s): %w", peer.Name, container, err)
		}
	}
	return nil
}
