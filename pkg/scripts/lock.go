package scripts

import (
	"fmt"
	"regexp"
	"strconv"
)

// ApplyLockPath is the apply lock on the leader (see ApplyLock). Reset keeps it.
const ApplyLockPath = "/var/lib/slipway/apply.lock"

// Operations on the apply lock.
const (
	LockAcquire  = "acquire"
	LockTakeover = "takeover"
	LockRefresh  = "refresh"
	LockRelease  = "release"
)

// LockParams configure ApplyLock.
type LockParams struct {
	// Path is the lock file; its guard is Path.guard. Empty means ApplyLockPath.
	Path string
	// Op is LockAcquire, LockTakeover, LockRefresh or LockRelease.
	Op string
	// Token identifies the holder: random, so that two runners never share it.
	Token string
	// Owner and Local describe the holder for others (see cluster.Lock); acquire and takeover
	// write them.
	Owner, Local string
	// Expect and ExpectMTime name the lock a takeover replaces: its token and its
	// modification time (seconds) as acquire reported them.
	Expect      string
	ExpectMTime int64
}

var tokenRE = regexp.MustCompile(`^[0-9a-f]{16,64}$`)

type lockData struct {
	Path, Op, Token, Expect, ExpectMTime string
	Record                               []string
}

// ApplyLock returns the script for one operation on the apply lock, a file on the leader that
// holds the token, owner and local identity of the slipway that holds it. The script takes
// flock(1) on a guard file for its whole run, so that two runners (on one machine or many)
// cannot both take the lock: acquire writes the lock when there is none and prints
// "acquired", or prints "held AGE MTIME" and the lock's lines; takeover replaces the lock
// only if it is still the one that was judged stale (same token, not refreshed since);
// refresh touches the lock if the token holds it ("refreshed") and prints "lost" and the
// holder otherwise; release removes the lock if the token holds it.
func ApplyLock(p LockParams) (string, error) {
	if p.Path == "" {
		p.Path = ApplyLockPath
	}
	if !tokenRE.MatchString(p.Token) {
		return "", fmt.Errorf("apply lock: token %q is not 16 to 64 lowercase hex digits", p.Token)
	}
	d := lockData{Path: p.Path, Op: p.Op, Token: p.Token}
	switch p.Op {
	case LockTakeover:
		if !tokenRE.MatchString(p.Expect) {
			return "", fmt.Errorf("apply lock: the token of the lock to take over, %q, is not 16 to 64 lowercase hex digits", p.Expect)
		}
		d.Expect, d.ExpectMTime = p.Expect, strconv.FormatInt(p.ExpectMTime, 10)
		fallthrough
	case LockAcquire:
		d.Record = []string{"token=" + p.Token, "owner=" + p.Owner, "local=" + p.Local}
	case LockRefresh, LockRelease:
	default:
		return "", fmt.Errorf("apply lock: unknown operation %q", p.Op)
	}
	return render("apply-lock", p.Op+" the apply lock", anyFamily, d)
}
