package cli

import (
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/spf13/cobra"

	"github.com/slipway-dev/slipway/pkg/cluster"
)

// proxyInfo is what `slipway proxy -o json` prints once the proxy serves.
type proxyInfo struct {
	URL     string   `json:"url"`
	Via     string   `json:"via"`
	Allowed []string `json:"allowed"`
}

func newProxyCommand(g *globalOptions, s Streams) *cobra.Command {
	var (
		sf          sshFlags
		listen      string
		output      string
		allowRemote bool
	)
	cmd := &cobra.Command{
		Use:   "proxy",
		Short: "Serve a local HTTPS proxy to the cluster's API, tunnelled over SSH (through the bastion, if any)",
		Long: `proxy listens on --listen (loopback by default) as an HTTP proxy for HTTPS, and opens each
tunnel through the SSH connection of a control plane, so that kubectl reaches an API endpoint
that is private: a load balancer or control planes with only private addresses. It tries the
control planes in order and keeps to the one that answered. It opens tunnels only to the API
endpoint (its host and alternative names) and to each control plane's API server, and refuses
any other destination. It runs until interrupted (Ctrl-C).

Point kubectl at it with HTTPS_PROXY for one command, or write a kubeconfig whose cluster
carries the proxy with 'slipway kubeconfig --proxy-url'. HTTPS_PROXY is not used for loopback
addresses; proxy-url is. The proxy adds no credentials: the kubeconfig's still decide what the
client may do.

It listens on loopback addresses only unless --allow-remote: anyone who reaches the
address could tunnel to the API through your SSH connections (the API still asks them for
credentials).

With -o json it prints one object, {"url", "via", "allowed"}, once it serves; --verbose logs
each tunnel opened and closed on stderr.`,
		Example: `  slipway proxy -m cluster.yaml -t tf.json
  HTTPS_PROXY=http://127.0.0.1:8080 kubectl --kubeconfig demo-kubeconfig get nodes

  # a kubeconfig that always goes through the proxy
  slipway kubeconfig -m cluster.yaml -t tf.json --proxy-url http://127.0.0.1:8080 > admin.conf

  # any free port, for scripts
  slipway proxy -m cluster.yaml -t tf.json --listen 127.0.0.1:0 -o json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := outputFormat(output, "text", "json"); err != nil {
				return err
			}
			remote, err := remoteListen(listen)
			if err != nil {
				return &UsageError{Err: err}
			}
			if remote && !allowRemote {
				return usageErrorf("--listen %s is not a loopback address: anyone who reaches it could tunnel to the cluster's API through your SSH connections; listen on 127.0.0.1, or pass --allow-remote if you mean it", listen)
			}
			if remote {
				fmt.Fprintf(s.Err, "Warning: --listen %s is not a loopback address: anyone who reaches it can tunnel to the cluster's API through your SSH connections\n", listen)
			}
			return sf.with(cmd, g, s, func(target *cluster.Target) error {
				p, err := cluster.APIProxy(target)
				if err != nil {
					return err
				}
				p.Log, p.Verbose = s.Err, g.verbose
				via, err := p.Check(cmd.Context())
				if err != nil {
					return err
				}
				ln, err := net.Listen("tcp", listen)
				if err != nil {
					return fmt.Errorf("listening on %s (choose another address with --listen): %w", listen, err)
				}
				defer ln.Close()
				url := "http://" + ln.Addr().String()
				if output == "json" {
					if err := printJSON(s.Out, proxyInfo{URL: url, Via: via, Allowed: p.Allowed()}); err != nil {
						return err
					}
				} else {
					fmt.Fprintf(s.Out, `Proxying to the API of cluster %q on %s, through %s over SSH.
It opens tunnels to %s only. Ctrl-C stops it.

  HTTPS_PROXY=%s kubectl --kubeconfig %s-kubeconfig get nodes
`, target.Manifest.Name, url, via, strings.Join(p.Allowed(), ", "), url, target.Manifest.Name)
				}
				err = p.Serve(cmd.Context(), ln)
				if errors.Is(err, net.ErrClosed) {
					err = nil
				}
				return err
			})
		},
	}
	sf.add(cmd)
	cmd.Flags().StringVar(&listen, "listen", "127.0.0.1:8080", "address to serve the proxy on (port 0 picks a free one)")
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json")
	cmd.Flags().BoolVar(&allowRemote, "allow-remote", false, "allow a --listen address that is not loopback (other machines could use the proxy)")
	return cmd
}

// remoteListen says whether the --listen address host:port may be reached from other
// machines: anything but localhost and loopback IPs, an empty host (every address) and other
// names (which may resolve anywhere) included.
func remoteListen(listen string) (bool, error) {
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return false, fmt.Errorf("--listen %q: want host:port, such as 127.0.0.1:8080: %w", listen, err)
	}
	if strings.EqualFold(host, "localhost") {
		return false, nil
	}
	ip := net.ParseIP(host)
	return ip == nil || !ip.IsLoopback(), nil
}
