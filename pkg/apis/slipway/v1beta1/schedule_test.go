package v1beta1

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestOnCalendar(t *testing.T) {
	good := map[string]string{
		"0 */12 * * *":        "*-*-* 00,12:00:00 UTC",
		"@daily":              "*-*-* 00:00:00 UTC",
		"@weekly":             "Sun *-*-* 00:00:00 UTC",
		"*/15 * * * *":        "*-*-* *:00,15,30,45:00 UTC",
		"30 2 1,15 * *":       "*-*-01,15 02:30:00 UTC",
		"0 9-17/4 * * 1-5":    "Mon,Tue,Wed,Thu,Fri *-*-* 09,13,17:00:00 UTC",
		"5 0 * 6 7":           "Sun *-06-* 00:05:00 UTC",
		"0 0 * * 0,7":         "Sun *-*-* 00:00:00 UTC",
		"0 0 * * *":           "*-*-* 00:00:00 UTC",
		"  1 2 3 4 *  ":       "*-04-03 02:01:00 UTC",
		"0 0 1-31 1-12 0-7":   "*-*-* 00:00:00 UTC",
		"0 12/6 * * *":        "*-*-* 12,18:00:00 UTC",
		"10,20 1 * 1,7 2-3/1": "Tue,Wed *-01,07-* 01:10,20:00 UTC",
	}
	for expr, want := range good {
		got, err := OnCalendar(expr)
		if err != nil || got != want {
			t.Errorf("OnCalendar(%q) = %q, %v; want %q", expr, got, err, want)
		}
	}
	bad := map[string]string{
		"":               "want five fields",
		"0 0 * *":        "got 4 fields",
		"60 * * * *":     "minute \"60\": 60 is outside 0-59",
		"0 24 * * *":     "hour \"24\": 24 is outside 0-23",
		"0 0 0 * *":      "day of month \"0\": 0 is outside 1-31",
		"0 0 * 13 *":     "month \"13\"",
		"0 0 * * 8":      "day of week \"8\"",
		"0 0 * JAN *":    "\"JAN\" is not a number (names such as MON or JAN are not supported)",
		"*/0 * * * *":    "the step \"0\" is not a positive number",
		"0 5-3 * * *":    "the range 5-3 runs backwards",
		"0 0 1 * 1":      "both restricted",
		"0 0 * * *; rm":  "got 6 fields",
		"@every 5m":      "got 2 fields",
		"0 0 * * MON-FR": "not a number",
	}
	for expr, want := range bad {
		if got, err := OnCalendar(expr); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("OnCalendar(%q) = %q, %v; want an error with %q", expr, got, err, want)
		}
	}
}

// TestOnCalendarAgreesWithSystemd has systemd-analyze compute the next firings of each
// translated expression and checks them against cron's rule, minute by minute.
func TestOnCalendarAgreesWithSystemd(t *testing.T) {
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("systemd-analyze is missing (Debian's systemd package)")
		}
		t.Skip("systemd-analyze is missing (Debian's systemd package)")
	}
	base := time.Date(2026, 1, 30, 23, 58, 0, 0, time.UTC)
	elapse := regexp.MustCompile(`(?m)(?:Next elapse|Iter\. #\d+): \w+ (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) UTC`)
	for _, expr := range []string{"0 */12 * * *", "*/15 * * * *", "30 2 1,15 * *", "0 9-17/4 * * 1-5", "5 0 * 2 7", "@monthly", "10,20 1 * 1,7 2-3/1", "0 12/6 * * *"} {
		cal, err := OnCalendar(expr)
		if err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(analyze, "calendar", "--base-time="+base.Format("2006-01-02 15:04:05")+" UTC", "--iterations=6", cal).CombinedOutput()
		if err != nil {
			t.Fatalf("systemd-analyze calendar %q (from %q): %v\n%s", cal, expr, err, out)
		}
		var got []string
		for _, m := range elapse.FindAllStringSubmatch(string(out), -1) {
			got = append(got, m[1])
		}
		var want []string
		for m := base.Add(time.Minute); len(want) < len(got) && m.Before(base.AddDate(2, 0, 0)); m = m.Add(time.Minute) {
			if cronMatches(t, expr, m) {
				want = append(want, m.Format("2006-01-02 15:04:05"))
			}
		}
		if len(got) != 6 || strings.Join(got, ", ") != strings.Join(want, ", ") {
			t.Errorf("%q as %q: systemd fires at\n%s\ncron at\n%s", expr, cal, strings.Join(got, ", "), strings.Join(want, ", "))
		}
	}
}

// cronMatches is cron's rule for one minute, written independently of OnCalendar's expansion.
func cronMatches(t *testing.T, expr string, m time.Time) bool {
	if x, ok := cronMacros[expr]; ok {
		expr = x
	}
	f := strings.Fields(expr)
	in := func(field string, v, lo, hi int) bool {
		for _, item := range strings.Split(field, ",") {
			r, s, hasStep := strings.Cut(item, "/")
			step := 1
			if hasStep {
				step = atoi(t, s)
			}
			a, b := lo, hi
			if r != "*" {
				x, y, isRange := strings.Cut(r, "-")
				a = atoi(t, x)
				b = a
				if isRange {
					b = atoi(t, y)
				} else if hasStep {
					b = hi
				}
			}
			if v >= a && v <= b && (v-a)%step == 0 {
				return true
			}
		}
		return false
	}
	dow := int(m.Weekday())
	return in(f[0], m.Minute(), 0, 59) && in(f[1], m.Hour(), 0, 23) && in(f[2], m.Day(), 1, 31) && in(f[3], int(m.Month()), 1, 12) &&
		(in(f[4], dow, 0, 7) || (dow == 0 && in(f[4], 7, 0, 7)))
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			t.Fatalf("not a number: %q", s)
		}
		n = n*10 + int(c-'0')
	}
	return n
}
