package machine

import (
	"testing"
	"time"
)

func TestCapacityBackoff(t *testing.T) {
	base, limit := 5*time.Second, 30*time.Second
	for _, tc := range []struct {
		n    int
		want time.Duration
	}{
		{1, 5 * time.Second}, {2, 10 * time.Second}, {3, 20 * time.Second}, {4, 30 * time.Second}, {50, 30 * time.Second},
	} {
		if got := capacityBackoff(base, limit, tc.n); got != tc.want {
			t.Errorf("capacityBackoff(%s, %s, %d) = %s, want %s", base, limit, tc.n, got, tc.want)
		}
	}
	// A limit below the base never makes the wait shorter than the poll interval.
	if got := capacityBackoff(time.Second, 100*time.Millisecond, 3); got != time.Second {
		t.Errorf("a limit below the base: %s, want the base", got)
	}
}
