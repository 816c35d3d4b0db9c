package sandboxapi

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"
)

// readyTimeout bounds how long a host may take to boot; they take 2-5 s when the machine is idle.
const readyTimeout = 90 * time.Second

// WaitReady waits until every host has booted (systemd running, sshd answering with the recorded
// host key), the load balancer listens, and the assets container serves.
func (sb *Sandbox) WaitReady(ctx context.Context, signer ssh.Signer) error {
	var wg sync.WaitGroup
	errs := make([]error, len(sb.Hosts)+1)
	for i, h := range sb.Hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if h.Role == LoadBalancer {
				errs[i] = waitTCP(ctx, net.JoinHostPort(h.IP, "6443"), "haproxy on "+h.Name)
				return
			}
			errs[i] = sb.waitBooted(ctx, h, signer)
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		errs[len(sb.Hosts)] = sb.waitAssets(ctx)
	}()
	wg.Wait()
	return errors.Join(errs...)
}

// waitBooted waits for SSH and then for systemd to finish booting. A degraded system is an
// error that lists the failed units: a sandbox host should boot clean.
func (sb *Sandbox) waitBooted(ctx context.Context, h Host, signer ssh.Signer) error {
	var c *ssh.Client
	err := poll(ctx, readyTimeout, "sshd on "+h.Name+" ("+h.IP+")", func() (err error) {
		c, err = sb.Dial(ctx, h, signer)
		return err
	})
	if err != nil {
		return err
	}
	defer c.Close()
	wctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	out, err := run(wctx, c, h, "systemctl is-system-running --wait", nil)
	if state := strings.TrimSpace(out); state != "running" {
		failed, _ := run(ctx, c, h, "systemctl --failed --no-legend --plain", nil)
		return fmt.Errorf("host %s booted into state %q (%v); failed units: %s", h.Name, state, err, strings.TrimSpace(failed))
	}
	return nil
}

func (sb *Sandbox) waitAssets(ctx context.Context) error {
	client := &http.Client{Timeout: 2 * time.Second}
	for _, url := range []string{sb.Assets.Registry + "/v2/", sb.Assets.Files + "/"} {
		err := poll(ctx, readyTimeout, url+" to answer 200", func() error {
			resp, err := client.Get(url)
			if err != nil {
				return err
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				return fmt.Errorf("HTTP %d", resp.StatusCode)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func waitTCP(ctx context.Context, address, what string) error {
	return poll(ctx, readyTimeout, what+" to accept connections on "+address, func() error {
		d := net.Dialer{Timeout: time.Second}
		c, err := d.DialContext(ctx, "tcp", address)
		if err == nil {
			c.Close()
		}
		return err
	})
}
