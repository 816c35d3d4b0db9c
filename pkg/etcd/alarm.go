package etcd

import (
	"context"
	"fmt"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Alarm is an alarm etcd raised on one member and keeps until it is disarmed. NOSPACE means the
// member's database reached its space quota: until no member has it, the cluster serves reads and
// deletes but refuses every write. CORRUPT means the member's data differs from the others'.
type Alarm struct {
	MemberID uint64
	// Type is etcd's name of the alarm: NOSPACE or CORRUPT.
	Type string
}

// Alarms lists the active alarms of every member. The request goes through etcd's consensus, as
// a member list does: it needs a quorum.
func (c *Client) Alarms(ctx context.Context) ([]Alarm, error) {
	resp, err := c.alarmList(ctx)
	if err != nil {
		return nil, err
	}
	return alarms(resp), nil
}

// Disarm deactivates the active alarms of the member with the given ID, or every active alarm
// when id is 0 (etcd's own "all members"), and returns the alarms it deactivated: none when there
// were none. A NOSPACE alarm disarmed while the database is still over its quota comes back with
// the next write that does not fit.
func (c *Client) Disarm(ctx context.Context, id uint64) ([]Alarm, error) {
	active, err := c.alarmList(ctx)
	if err != nil {
		return nil, err
	}
	var out []Alarm
	for _, a := range active.Alarms {
		if id != 0 && a.MemberID != id {
			continue
		}
		// One request per alarm: etcd deactivates an alarm by member and type, and a request
		// for a member with no type deactivates nothing.
		dctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		resp, err := c.c.AlarmDisarm(dctx, (*clientv3.AlarmMember)(a))
		cancel()
		if err != nil {
			return out, fmt.Errorf("disarming etcd alarm %s of member %x: %w", a.Alarm, a.MemberID, err)
		}
		out = append(out, alarms(resp)...)
	}
	return out, nil
}

func (c *Client) alarmList(ctx context.Context) (*clientv3.AlarmResponse, error) {
	actx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	resp, err := c.c.AlarmList(actx)
	if err != nil {
		return nil, fmt.Errorf("listing etcd alarms: %w", err)
	}
	return resp, nil
}

func alarms(resp *clientv3.AlarmResponse) []Alarm {
	var out []Alarm
	for _, a := range resp.Alarms {
		out = append(out, Alarm{MemberID: a.MemberID, Type: a.Alarm.String()})
	}
	return out
}
