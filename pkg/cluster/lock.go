package cluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/user"
	"strconv"
	"strings"
	"time"

	"github.com/slipway-dev/slipway/pkg/scripts"
	"github.com/slipway-dev/slipway/pkg/ssh"
)

// ErrLockLost is the cause of the context Lock returns once the lock is no longer this run's:
// another run took it over, or it could not be refreshed for so long that another may have.
var ErrLockLost = errors.New("the apply lock was lost")

// The apply lock is a file on the leader (scripts.ApplyLock): every apply and reset, before and
// after the cluster exists, can reach it. The holder refreshes it; one not refreshed for
// lockStale is taken over.
const (
	lockRefresh = 20 * time.Second
	lockStale   = 2 * time.Minute
)

// locker takes and keeps one lock; Lock uses the leader's with the default timings, tests their
// own file and shorter ones.
type locker struct {
	host    ssh.Host
	leader  string // for messages
	path    string // "" is scripts.ApplyLockPath
	refresh time.Duration
	stale   time.Duration
	out     io.Writer

	token, owner, local string
}

// Lock takes the cluster's apply lock on the leader (named leader, reached through h) and keeps
// it fresh until release is called. Take it before probing: a plan built while another run
// changes the cluster is stale before it is shown. The returned context is ctx, cancelled with
// cause ErrLockLost if the lock stops being this run's. A lock held by another live run is an
// error naming its holder; a stale one (its holder crashed or was killed) is taken over, with a
// message, by exactly one of the runs that find it so.
func Lock(ctx context.Context, leader string, h ssh.Host, out io.Writer) (context.Context, func(), error) {
	l := &locker{host: h, leader: leader, refresh: lockRefresh, stale: lockStale, out: out}
	return l.take(ctx)
}

func (l *locker) take(ctx context.Context) (context.Context, func(), error) {
	var err error
	if l.token, err = newLockToken(); err != nil {
		return nil, nil, err
	}
	l.owner, l.local = lockOwner(), localIdentity()
	if err := l.acquire(ctx); err != nil {
		return nil, nil, err
	}
	lockCtx, cancel := context.WithCancelCause(ctx)
	refreshCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		l.keep(refreshCtx, cancel)
	}()
	return lockCtx, func() {
		stop()
		<-done
		cancel(nil)
		rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer rcancel()
		_ = l.run(rctx, scripts.LockParams{Op: scripts.LockRelease}, nil)
	}, nil
}

// acquire takes the lock, taking over a stale one. Two runs that find the same lock stale race
// for it on the host, and the loser sees the winner's fresh lock.
func (l *locker) acquire(ctx context.Context) error {
	var st lockState
	if err := l.run(ctx, scripts.LockParams{Op: scripts.LockAcquire}, &st); err != nil {
		return fmt.Errorf("taking the apply lock on %s (nothing was changed): %w", l.leader, err)
	}
	for range 3 {
		if st.acquired {
			return nil
		}
		if st.age < l.stale && !holderGone(st.local) {
			return fmt.Errorf("another apply holds the lock %s on %s (%s, refreshed %ds ago); wait for it to finish, or, if it is gone, wait %s for the lock to go stale",
				l.lockPath(), l.leader, st.owner, int(st.age.Seconds()), l.stale)
		}
		fmt.Fprintf(l.out, "Taking over a stale apply lock on %s held by %s (not refreshed for %ds, or its process is gone)\n", l.leader, st.owner, int(st.age.Seconds()))
		p := scripts.LockParams{Op: scripts.LockTakeover, Expect: st.token, ExpectMTime: st.mtime}
		if err := l.run(ctx, p, &st); err != nil {
			return fmt.Errorf("taking over the apply lock on %s (nothing was changed): %w", l.leader, err)
		}
	}
	return fmt.Errorf("the apply lock on %s changed hands while it was being taken over; try again", l.leader)
}

// keep refreshes the lock until ctx ends. When the lock is found to be another's, or when it
// could not be refreshed for long enough that another run may have taken it over, it cancels
// the run with ErrLockLost: two runs must not change one cluster at once.
func (l *locker) keep(ctx context.Context, lost context.CancelCauseFunc) {
	t := time.NewTicker(l.refresh)
	defer t.Stop()
	last := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		var st lockState
		err := l.run(ctx, scripts.LockParams{Op: scripts.LockRefresh}, &st)
		switch {
		case ctx.Err() != nil:
			return
		case err == nil && st.refreshed:
			last = time.Now()
			continue
		case err == nil:
			lost(fmt.Errorf("%w: the lock on %s is now held by %s", ErrLockLost, l.leader, ownerOrUnknown(st.owner)))
			return
		case time.Since(last) > l.stale-l.refresh:
			lost(fmt.Errorf("%w: it could not be refreshed on %s for %s: %w", ErrLockLost, l.leader, time.Since(last).Round(time.Second), err))
			return
		}
	}
}

func (l *locker) lockPath() string {
	if l.path == "" {
		return scripts.ApplyLockPath
	}
	return l.path
}

// run runs one lock operation as this holder and parses what it printed into st, if not nil.
func (l *locker) run(ctx context.Context, p scripts.LockParams, st *lockState) error {
	p.Path, p.Token, p.Owner, p.Local = l.path, l.token, l.owner, l.local
	script, err := scripts.ApplyLock(p)
	if err != nil {
		return err
	}
	out, err := l.host.Script(ctx, p.Op+" the apply lock", script).Output()
	if err != nil || st == nil {
		return err
	}
	return st.parse(string(out))
}

// lockState is what a lock operation printed.
type lockState struct {
	acquired, refreshed bool
	age                 time.Duration
	mtime               int64
	token, owner, local string
}

func (s *lockState) parse(out string) error {
	*s = lockState{}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	switch first := lines[0]; {
	case first == "acquired":
		s.acquired = true
		return nil
	case first == "refreshed":
		s.refreshed = true
		return nil
	case first == "lost":
		lines = lines[1:]
		if len(lines) == 0 {
			return nil
		}
	}
	var age int64
	if len(lines) == 0 {
		return fmt.Errorf("unexpected output from the apply lock script: %q", out)
	}
	if _, err := fmt.Sscanf(lines[0], "held %d %d", &age, &s.mtime); err != nil {
		return fmt.Errorf("unexpected output from the apply lock script: %q", out)
	}
	s.age = time.Duration(age) * time.Second
	for _, line := range lines[1:] {
		k, v, _ := strings.Cut(line, "=")
		switch k {
		case "token":
			s.token = v
		case "owner":
			s.owner = v
		case "local":
			s.local = v
		}
	}
	if s.token == "" {
		// An unreadable lock (of an older slipway, or damaged) is judged by its age alone.
		s.token = strings.Repeat("0", 32)
	}
	return nil
}

func newLockToken() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("creating the apply lock's token: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// lockOwner describes the holder for people; nothing decides anything by it.
func lockOwner() string {
	name := "unknown"
	if u, err := user.Current(); err == nil {
		name = u.Username
	}
	host, _ := os.Hostname()
	return fmt.Sprintf("%s@%s pid %d since %s", name, host, os.Getpid(), time.Now().UTC().Format(time.RFC3339))
}

func ownerOrUnknown(s string) string {
	if s == "" {
		return "an unknown holder"
	}
	return s
}

// localIdentity names this process beyond doubt on this machine: the kernel's boot, the PID
// namespace, the PID and the process's start time. A hostname and a PID alone are not enough:
// runners in containers share hostnames and reuse PIDs in PID namespaces of their own.
func localIdentity() string {
	id, err := processIdentity(os.Getpid())
	if err != nil {
		return ""
	}
	return id
}

func processIdentity(pid int) (string, error) {
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return "", err
	}
	ns, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		return "", err
	}
	start, err := startTime(pid)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("boot=%s pidns=%s pid=%d start=%s", strings.TrimSpace(string(boot)), ns, pid, start), nil
}

// startTime is field 22 of /proc/PID/stat: when the process started, in clock ticks since boot.
func startTime(pid int) (string, error) {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", err
	}
	// The command name, field 2, is in parentheses and may hold spaces and parentheses.
	i := strings.LastIndexByte(string(stat), ')')
	if i < 0 {
		return "", fmt.Errorf("unexpected /proc/%d/stat", pid)
	}
	fields := strings.Fields(string(stat[i+1:]))
	if len(fields) < 20 {
		return "", fmt.Errorf("unexpected /proc/%d/stat", pid)
	}
	return fields[19], nil
}

// holderGone reports whether the lock's holder, as its local identity says, ran on this
// machine in this PID namespace and its process is gone: a run that was killed, whose lock can
// be taken over at once instead of after lockStale. Anything uncertain is not gone.
func holderGone(local string) bool {
	var boot, ns, start string
	var pid int
	if _, err := fmt.Sscanf(local, "boot=%s pidns=%s pid=%d start=%s", &boot, &ns, &pid, &start); err != nil || pid <= 0 {
		return false
	}
	me := localIdentity()
	var myBoot, myNS string
	if _, err := fmt.Sscanf(me, "boot=%s pidns=%s", &myBoot, &myNS); err != nil || boot != myBoot || ns != myNS || pid == os.Getpid() {
		return false
	}
	now, err := processIdentity(pid)
	if err != nil {
		// No such process (in this namespace): the holder is gone.
		_, statErr := os.Stat("/proc/" + strconv.Itoa(pid))
		return errors.Is(statErr, os.ErrNotExist)
	}
	// The PID is in use again, by another process if it started at another time.
	return now != local
}
