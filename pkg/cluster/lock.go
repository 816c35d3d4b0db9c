package cluster

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/user"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/slipway-dev/slipway/pkg/ssh"
)

// The apply lock is a file on the leader: every apply, before and after the cluster exists,
// can reach it. The holder refreshes it; one not refreshed for lockStale is taken over.
const (
	lockPath    = "/var/lib/slipway/apply.lock"
	lockRefresh = 20 * time.Second
	lockStale   = 2 * time.Minute
)

// Lock takes the cluster's apply lock on the leader (named leader, reached through h) and keeps
// it fresh until the returned function releases it. A lock held by another live apply is an
// error naming its holder; a stale one (its holder crashed or was killed) is taken over with a
// message.
func Lock(ctx context.Context, leader string, h ssh.Host, out io.Writer) (func(), error) {
	owner := lockOwner()
	script := fmt.Sprintf(`set -eu
mkdir -p /var/lib/slipway
if ( set -o noclobber; printf '%%s\n' %s > %s ) 2>/dev/null; then echo acquired; exit 0; fi
echo "held $(( $(date +%%s) - $(stat -c %%Y %s) )) $(head -n1 %s)"
`, ssh.Quote(owner), lockPath, lockPath, lockPath)
	out1, err := h.Script(ctx, "take the apply lock", script).Output()
	if err != nil {
		return nil, fmt.Errorf("taking the apply lock on %s: %w", leader, err)
	}
	state := strings.TrimSpace(string(out1))
	if state != "acquired" {
		fields := strings.SplitN(strings.TrimPrefix(state, "held "), " ", 2)
		age, _ := strconv.Atoi(fields[0])
		holder := ""
		if len(fields) > 1 {
			holder = fields[1]
		}
		if time.Duration(age)*time.Second < lockStale && !holderGone(holder) {
			return nil, fmt.Errorf("another apply holds the lock %s on %s (%s, refreshed %ds ago); wait for it to finish, or, if it is gone, wait %s for the lock to go stale", lockPath, leader, holder, age, lockStale)
		}
		fmt.Fprintf(out, "Taking over a stale apply lock on %s held by %s (not refreshed for %ds, or its process is gone)\n", leader, holder, age)
		take := fmt.Sprintf("printf '%%s\\n' %s > %s", ssh.Quote(owner), lockPath)
		if err := h.Script(ctx, "take over the stale apply lock", take).Run(); err != nil {
			return nil, fmt.Errorf("taking over the apply lock on %s: %w", leader, err)
		}
	}
	refreshCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(lockRefresh)
		defer t.Stop()
		for {
			select {
			case <-refreshCtx.Done():
				return
			case <-t.C:
				_ = h.Command(refreshCtx, "touch", lockPath).Run()
			}
		}
	}()
	return func() {
		stop()
		<-done
		release := fmt.Sprintf("if [ \"$(head -n1 %s 2>/dev/null)\" = %s ]; then rm -f %s; fi", lockPath, ssh.Quote(owner), lockPath)
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		_ = h.Script(rctx, "release the apply lock", release).Run()
	}, nil
}

func lockOwner() string {
	name := "unknown"
	if u, err := user.Current(); err == nil {
		name = u.Username
	}
	host, _ := os.Hostname()
	return fmt.Sprintf("%s@%s pid %d since %s", name, host, os.Getpid(), time.Now().UTC().Format(time.RFC3339))
}

// holderGone reports whether the lock's holder ran on this machine and its process no longer
// exists: an apply that was killed. Its lock can be taken over at once instead of after
// lockStale.
func holderGone(holder string) bool {
	var user, host string
	var pid int
	at := strings.Index(holder, "@")
	if at < 0 {
		return false
	}
	user = holder[:at]
	if _, err := fmt.Sscanf(holder[at+1:], "%s pid %d", &host, &pid); err != nil || user == "" || pid <= 0 {
		return false
	}
	me, err := os.Hostname()
	if err != nil || host != me || pid == os.Getpid() {
		return false
	}
	// Signal 0 checks for existence without touching the process.
	return syscall.Kill(pid, 0) == syscall.ESRCH
}
