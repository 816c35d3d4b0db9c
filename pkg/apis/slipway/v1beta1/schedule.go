package v1beta1

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// MaxSnapshotRetain bounds etcd.snapshots.retain.
const MaxSnapshotRetain = 1000

// cronMacros are the @ shorthands of cron that OnCalendar accepts.
var cronMacros = map[string]string{
	"@hourly": "0 * * * *", "@daily": "0 0 * * *", "@midnight": "0 0 * * *",
	"@weekly": "0 0 * * 0", "@monthly": "0 0 1 * *", "@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *",
}

// cronField is one field of a cron expression: its name and range.
type cronField struct {
	name     string
	min, max int
}

var cronFields = []cronField{{"minute", 0, 59}, {"hour", 0, 23}, {"day of month", 1, 31}, {"month", 1, 12}, {"day of week", 0, 7}}

var weekdays = []string{"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"}

// OnCalendar translates a cron expression of five fields (or an @ shorthand such as @daily) into
// the systemd OnCalendar expression that fires at the same minutes, in UTC. Every field is
// expanded into the list of values it matches, so the result means exactly what cron means.
// Expressions that restrict both the day of month and the day of week are refused: cron fires
// when either matches, systemd only when both do.
func OnCalendar(expr string) (string, error) {
	expr = strings.TrimSpace(expr)
	if m, ok := cronMacros[expr]; ok {
		expr = m
	}
	parts := strings.Fields(expr)
	if len(parts) != len(cronFields) {
		return "", fmt.Errorf("want five fields (minute hour day-of-month month day-of-week) or @hourly, @daily, @weekly, @monthly, @yearly; got %d fields", len(parts))
	}
	values := make([][]int, len(parts))
	for i, p := range parts {
		v, err := cronValues(p, cronFields[i])
		if err != nil {
			return "", err
		}
		values[i] = v
	}
	// Sunday is both 0 and 7.
	dows := map[int]bool{}
	for _, d := range values[4] {
		dows[d%7] = true
	}
	domAll, dowAll := len(values[2]) == 31, len(dows) == 7
	if !domAll && !dowAll {
		return "", fmt.Errorf("the day of month (%s) and the day of week (%s) are both restricted: cron fires on either, systemd only on both; restrict one of them", parts[2], parts[4])
	}
	list := func(v []int, all int) string {
		if len(v) == all {
			return "*"
		}
		s := make([]string, len(v))
		for i, n := range v {
			s[i] = fmt.Sprintf("%02d", n)
		}
		return strings.Join(s, ",")
	}
	cal := fmt.Sprintf("*-%s-%s %s:%s:00 UTC", list(values[3], 12), list(values[2], 31), list(values[1], 24), list(values[0], 60))
	if !dowAll {
		var names []string
		for d := range 7 {
			if dows[d] {
				names = append(names, weekdays[d])
			}
		}
		cal = strings.Join(names, ",") + " " + cal
	}
	return cal, nil
}

// cronValues expands one cron field (a list of *, n, a-b, each with an optional /step) into the
// sorted values it matches.
func cronValues(field string, f cronField) ([]int, error) {
	set := map[int]bool{}
	for _, item := range strings.Split(field, ",") {
		rng, stepText, hasStep := strings.Cut(item, "/")
		step := 1
		if hasStep {
			n, err := strconv.Atoi(stepText)
			if err != nil || n < 1 {
				return nil, fmt.Errorf("%s %q: the step %q is not a positive number", f.name, field, stepText)
			}
			step = n
		}
		lo, hi := f.min, f.max
		switch {
		case rng == "*":
		case strings.Contains(rng, "-"):
			a, b, _ := strings.Cut(rng, "-")
			var err error
			if lo, err = cronNumber(a, field, f); err != nil {
				return nil, err
			}
			if hi, err = cronNumber(b, field, f); err != nil {
				return nil, err
			}
			if lo > hi {
				return nil, fmt.Errorf("%s %q: the range %s runs backwards", f.name, field, rng)
			}
		default:
			n, err := cronNumber(rng, field, f)
			if err != nil {
				return nil, err
			}
			lo = n
			if !hasStep {
				hi = n
			}
		}
		for v := lo; v <= hi; v += step {
			set[v] = true
		}
	}
	out := make([]int, 0, len(set))
	for v := range set {
		out = append(out, v)
	}
	slices.Sort(out)
	return out, nil
}

func cronNumber(s, field string, f cronField) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("%s %q: %q is not a number (names such as MON or JAN are not supported)", f.name, field, s)
	}
	if n < f.min || n > f.max {
		return 0, fmt.Errorf("%s %q: %d is outside %d-%d", f.name, field, n, f.min, f.max)
	}
	return n, nil
}
