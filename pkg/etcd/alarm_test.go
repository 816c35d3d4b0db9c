package etcd

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// TestAlarmNoSpace fills a real etcd with a 4 MiB space quota (etcd has no minimum) until it
// raises NOSPACE, checks that the alarm shows on the member, that disarming another member's
// alarms leaves it, and that disarming it before space is freed does not help; then frees the
// space as an operator would (delete, compact, defragment), disarms, and checks that the
// cluster takes writes again. It does so twice: disarming the member by its ID, and every alarm.
func TestAlarmNoSpace(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c, endpoint := startEtcd(ctx, t, "--quota-backend-bytes", fmt.Sprint(4<<20))
	ms, err := c.Members(ctx)
	if err != nil || len(ms) != 1 {
		t.Fatalf("members %+v, %v; want one", ms, err)
	}
	id := ms[0].ID
	if ms[0].Alarms != nil {
		t.Errorf("a fresh member has alarms %v", ms[0].Alarms)
	}
	// Disarming where nothing is armed is a no-op, not an error.
	for _, target := range []uint64{id, 0} {
		if got, err := c.Disarm(ctx, target); err != nil || got != nil {
			t.Errorf("Disarm(%x) without alarms: %v, %v; want nothing done", target, got, err)
		}
	}

	for _, tc := range []struct {
		name   string
		target uint64
	}{{"the member by ID", id}, {"every alarm", 0}} {
		t.Run(tc.name, func(t *testing.T) {
			fill(ctx, t, c)
			ms, err := c.Members(ctx)
			if err != nil || len(ms) != 1 || !slices.Equal(ms[0].Alarms, []string{"NOSPACE"}) || !ms[0].Healthy {
				t.Fatalf("members %+v, %v; want the member healthy with alarm NOSPACE", ms, err)
			}
			want := []Alarm{{MemberID: id, Type: "NOSPACE"}}
			if got, err := c.Alarms(ctx); err != nil || !slices.Equal(got, want) {
				t.Fatalf("alarms %+v, %v; want %+v", got, err, want)
			}
			if got, err := c.Disarm(ctx, id+1); err != nil || got != nil {
				t.Errorf("disarming another member: %+v, %v; want nothing done", got, err)
			}
			if got, err := c.Alarms(ctx); err != nil || !slices.Equal(got, want) {
				t.Errorf("after disarming another member, alarms %+v, %v; want %+v", got, err, want)
			}

			// The help's advice: disarmed while the database is still full, the alarm comes back.
			if tc.target != 0 {
				if got, err := c.Disarm(ctx, tc.target); err != nil || !slices.Equal(got, want) {
					t.Fatalf("disarming a full member: %+v, %v; want %+v", got, err, want)
				}
				if _, err := c.c.Put(ctx, "/registry/test/more", strings.Repeat("x", 64<<10)); err == nil || !strings.Contains(err.Error(), "database space exceeded") {
					t.Fatalf("a put after disarming without freeing space: %v; want database space exceeded", err)
				}
				if got, err := c.Alarms(ctx); err != nil || !slices.Equal(got, want) {
					t.Fatalf("after a put over the quota, alarms %+v, %v; want %+v", got, err, want)
				}
			}

			resp, err := c.c.Delete(ctx, "/registry/test/", clientv3.WithPrefix())
			if err != nil {
				t.Fatalf("deleting under NOSPACE: %v", err)
			}
			if _, err := c.c.Compact(ctx, resp.Header.Revision, clientv3.WithCompactPhysical()); err != nil {
				t.Fatal(err)
			}
			if _, _, err := c.Defragment(ctx, endpoint); err != nil {
				t.Fatal(err)
			}
			if _, err := c.c.Put(ctx, "/registry/test/after", "x"); err == nil {
				t.Fatal("a put succeeded with the alarm still armed: the test does not test the alarm")
			}
			if got, err := c.Disarm(ctx, tc.target); err != nil || !slices.Equal(got, want) {
				t.Fatalf("Disarm(%x): %+v, %v; want %+v", tc.target, got, err, want)
			}
			if got, err := c.Alarms(ctx); err != nil || got != nil {
				t.Errorf("alarms after the disarm: %+v, %v; want none", got, err)
			}
			if _, err := c.c.Put(ctx, "/registry/test/after", "x"); err != nil {
				t.Errorf("a put after freeing space and disarming: %v", err)
			}
			if ms, err := c.Members(ctx); err != nil || len(ms) != 1 || ms[0].Alarms != nil {
				t.Errorf("members after the disarm %+v, %v; want no alarms", ms, err)
			}
		})
	}
}

// fill writes 64 KiB values until etcd refuses a put for its space quota, and fails the test
// if it refuses for another reason or never does.
func fill(ctx context.Context, t *testing.T, c *Client) {
	t.Helper()
	value := strings.Repeat("x", 64<<10)
	for i := range 1000 {
		_, err := c.c.Put(ctx, fmt.Sprintf("/registry/test/%04d", i), value)
		if err == nil {
			continue
		}
		if !strings.Contains(err.Error(), "database space exceeded") {
			t.Fatalf("put %d: %v; want it to succeed or to say database space exceeded", i, err)
		}
		t.Logf("etcd refused put %d: %v", i, err)
		return
	}
	t.Fatal("1000 puts of 64 KiB fit in a 4 MiB quota")
}
