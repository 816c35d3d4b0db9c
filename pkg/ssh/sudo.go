package ssh

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
)

// useSudo reports whether commands on this host go through `sudo -n`.
// The first time per connection it checks that sudo works without a
// password, so a prompt becomes one clear error instead of a hang or a
// confusing failure of whatever command came first.
func (c *Conn) useSudo(ctx context.Context) (bool, error) {
	if c.pool.opts.Sudo == SudoNever || c.target.user() == "root" {
		return false, nil
	}
	l, err := c.link(ctx)
	if err != nil {
		return false, err
	}
	l.sudoMu.Lock()
	defer l.sudoMu.Unlock()
	if !l.sudoChecked {
		err, final := c.probeSudo(ctx)
		if !final {
			return false, err
		}
		l.sudoChecked, l.sudoErr = true, err
	}
	return l.sudoErr == nil, l.sudoErr
}

// probeSudo runs `sudo -n true`. final is false when the probe itself
// could not run (connection lost, cancelled), so the next call probes again.
func (c *Conn) probeSudo(ctx context.Context) (err error, final bool) {
	var stderr bytes.Buffer
	err = c.exec(ctx, "sudo -n true", false, nil, &bytes.Buffer{}, &stderr)
	if err == nil {
		return nil, true
	}
	user := c.target.user()
	msg := strings.TrimSpace(stderr.String())
	var ee *ExitError
	switch {
	case !errors.As(err, &ee):
		return fmt.Errorf("checking sudo on %s: %w", c.Name(), err), false
	case strings.Contains(msg, "password is required") || strings.Contains(msg, "a terminal is required"):
		return fmt.Errorf("running commands as root on %s: user %s: %w (%s); slipway runs sudo -n and never answers prompts: "+
			"allow passwordless sudo (e.g. \"%s ALL=(ALL) NOPASSWD: ALL\" in /etc/sudoers.d/) or log in as root",
			c.Name(), user, ErrSudoPassword, msg, user), true
	case ee.ExitStatus == 127:
		return fmt.Errorf("running commands as root on %s: user %s is not root and sudo is not installed", c.Name(), user), true
	}
	return fmt.Errorf("running commands as root on %s: sudo -n true failed for user %s: exit status %d: %s",
		c.Name(), user, ee.ExitStatus, msg), true
}
