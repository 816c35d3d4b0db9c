package cluster

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/slipway-dev/slipway/pkg/etcd"
)

// EtcdMembers lists the cluster's etcd members with their health, reached through the first
// control plane that answers.
func EtcdMembers(ctx context.Context, t *Target) ([]etcd.Member, error) {
	ec, ms, err := connectEtcd(ctx, t)
	if err != nil {
		return nil, err
	}
	ec.Close()
	return ms, nil
}

// connectEtcd connects to etcd through the first control plane that answers and lists the
// members. The caller closes the client.
func connectEtcd(ctx context.Context, t *Target) (*etcd.Client, []etcd.Member, error) {
	ec, err := t.access().Etcd(ctx)
	if err != nil {
		return nil, nil, err
	}
	ms, err := ec.Members(ctx)
	if err != nil {
		ec.Close()
		return nil, nil, err
	}
	return ec, ms, nil
}

// Snapshot is a snapshot file written by EtcdSnapshot.
type Snapshot struct {
	Path   string `json:"path"`
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
}

// EtcdSnapshot streams a consistent etcd snapshot to path on this machine, mode 0600 (it holds
// every Secret of the cluster), with path.sha256 beside it in sha256sum's format. The snapshot's
// own trailing hash is checked before the file takes its name; an existing file is never
// overwritten, and an interrupted snapshot leaves no file behind.
func EtcdSnapshot(ctx context.Context, t *Target, path string) (*Snapshot, error) {
	if _, err := os.Lstat(path); err == nil {
		return nil, fmt.Errorf("%s exists: slipway does not overwrite a snapshot; remove it or choose another name", path)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	ec, err := t.access().Etcd(ctx)
	if err != nil {
		return nil, err
	}
	defer ec.Close()
	part, err := os.OpenFile(path+".part", os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("creating the snapshot file: %w", err)
	}
	done := false
	defer func() {
		if !done {
			part.Close()
			os.Remove(part.Name())
		}
	}()
	h := sha256.New()
	n, err := ec.Snapshot(ctx, io.MultiWriter(part, h))
	if err != nil {
		return nil, err
	}
	if err := part.Sync(); err != nil {
		return nil, fmt.Errorf("writing %s: %w", part.Name(), err)
	}
	if err := part.Close(); err != nil {
		return nil, fmt.Errorf("writing %s: %w", part.Name(), err)
	}
	// Link, not rename: a file that appeared at path meanwhile is not replaced.
	if err := os.Link(part.Name(), path); err != nil {
		return nil, fmt.Errorf("naming the snapshot %s: %w", path, err)
	}
	done = true
	os.Remove(part.Name())
	sum := hex.EncodeToString(h.Sum(nil))
	if err := os.WriteFile(path+".sha256", []byte(sum+"  "+filepath.Base(path)+"\n"), 0o600); err != nil {
		return nil, fmt.Errorf("the snapshot is %s, but its checksum file could not be written: %w", path, err)
	}
	return &Snapshot{Path: path, Bytes: n, SHA256: sum}, nil
}

// Defragmented is one member's defragmentation, as EtcdDefragment reports it.
type Defragmented struct {
	Name   string `json:"name"`
	ID     string `json:"id"`
	Leader bool   `json:"leader"`
	Before int64  `json:"dbSizeBefore"`
	After  int64  `json:"dbSizeAfter"`
	// Seconds is how long the member took, from its status before to its status after.
	Seconds float64 `json:"seconds"`
}

// EtcdDefragment defragments every etcd member, one at a time, followers first and the leader
// last (a defragmenting leader holds up the whole cluster's writes; done last, it happens once).
// A member answers nothing while it rewrites its database, so every member must be healthy
// before the first starts: with one member down, defragmenting another would cost the cluster
// its quorum. progress, if not nil, hears of each member as it starts (d nil) and when it is done.
func EtcdDefragment(ctx context.Context, t *Target, progress func(member string, d *Defragmented)) ([]Defragmented, error) {
	ec, ms, err := connectEtcd(ctx, t)
	if err != nil {
		return nil, err
	}
	defer ec.Close()
	order, err := defragmentOrder(ms)
	if err != nil {
		return nil, err
	}
	var out []Defragmented
	for _, m := range order {
		if progress != nil {
			progress(m.Name, nil)
		}
		start := time.Now()
		before, after, err := ec.Defragment(ctx, m.ClientURL)
		if err != nil {
			return out, fmt.Errorf("member %s: %w", m.Name, err)
		}
		d := Defragmented{Name: m.Name, ID: fmt.Sprintf("%x", m.ID), Leader: m.Leader, Before: before, After: after, Seconds: time.Since(start).Seconds()}
		out = append(out, d)
		if progress != nil {
			progress(m.Name, &d)
		}
	}
	return out, nil
}

// defragmentOrder returns the members in the order to defragment them: followers in the order
// etcd lists them, the leader last. It refuses when a member is unhealthy or has no client URL.
func defragmentOrder(ms []etcd.Member) ([]etcd.Member, error) {
	var order []etcd.Member
	var leader *etcd.Member
	var down []string
	for i := range ms {
		m := &ms[i]
		switch {
		case m.ClientURL == "" || !m.Healthy:
			name := m.Name
			if name == "" {
				name = fmt.Sprintf("%x (not started)", m.ID)
			}
			down = append(down, name)
		case m.Leader:
			leader = m
		default:
			order = append(order, *m)
		}
	}
	if len(down) > 0 {
		return nil, fmt.Errorf("etcd member %s does not answer: defragmenting another member now could cost the cluster its quorum; bring it back first (slipway etcd members shows them)", strings.Join(down, ", "))
	}
	if leader == nil {
		return nil, fmt.Errorf("no etcd member says it is the leader: the cluster has no quorum")
	}
	return append(order, *leader), nil
}

// ErrNoSuchMember is the error of EtcdDisarm for a member the cluster does not have.
var ErrNoSuchMember = errors.New("no such etcd member")

// Disarmed is an etcd alarm EtcdDisarm deactivated.
type Disarmed struct {
	// Member is the member's name, empty for an alarm of a member no longer in the cluster.
	Member string `json:"member"`
	ID     string `json:"id"`
	Alarm  string `json:"alarm"`
}

// EtcdDisarm deactivates the active alarms of one etcd member, named by its name or its ID in
// hex (as EtcdMembers shows it), or with member "" every active alarm, those of members no
// longer in the cluster included. It returns the alarms it deactivated, none if there were none.
func EtcdDisarm(ctx context.Context, t *Target, member string) ([]Disarmed, error) {
	ec, ms, err := connectEtcd(ctx, t)
	if err != nil {
		return nil, err
	}
	defer ec.Close()
	var id uint64
	if member != "" {
		if id, err = memberID(ms, member); err != nil {
			return nil, err
		}
	}
	alarms, err := ec.Disarm(ctx, id)
	return disarmed(ms, alarms), err
}

// memberID finds a member by name, or else by ID in hex.
func memberID(ms []etcd.Member, member string) (uint64, error) {
	for _, m := range ms {
		if m.Name == member {
			return m.ID, nil
		}
	}
	var names []string
	for _, m := range ms {
		if fmt.Sprintf("%x", m.ID) == member {
			return m.ID, nil
		}
		name := m.Name
		if name == "" {
			name = fmt.Sprintf("%x (not started)", m.ID)
		}
		names = append(names, name)
	}
	return 0, fmt.Errorf("%w %q: the members are %s", ErrNoSuchMember, member, strings.Join(names, ", "))
}

// disarmed names the members of the alarms.
func disarmed(ms []etcd.Member, alarms []etcd.Alarm) []Disarmed {
	out := []Disarmed{}
	for _, a := range alarms {
		d := Disarmed{ID: fmt.Sprintf("%x", a.MemberID), Alarm: a.Type}
		for _, m := range ms {
			if m.ID == a.MemberID {
				d.Member = m.Name
			}
		}
		out = append(out, d)
	}
	return out
}

// alarmAdvice says what an etcd alarm means and what to do about it, for status.
func alarmAdvice(alarm string) string {
	switch alarm {
	case "NOSPACE":
		return "its database reached etcd's space quota, and the cluster takes no writes until the alarm is disarmed; " +
			"free space first (delete what filled it, then slipway etcd defragment), then slipway etcd disarm, " +
			"or the next write raises it again"
	case "CORRUPT":
		return "its data differs from the other members'; replace the member (reinstall its control plane so that it " +
			"rejoins with the others' data), then slipway etcd disarm"
	}
	return "see etcd's documentation; slipway etcd disarm deactivates it"
}
