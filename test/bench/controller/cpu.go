package controller

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/<pid>/stat: 100 on Linux for
// every architecture Go builds this for.
const clockTicks = 100

// cpuByProgram returns the CPU seconds (user and system) that the processes running each of
// names have used so far, read from /proc/<pid>/stat, plus "bench" for this process (the
// test's kubelets and the benchmark itself). Two readings, subtracted, say which program the
// run kept busy.
func cpuByProgram(names ...string) (map[string]float64, error) {
	out := map[string]float64{}
	pids, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		return nil, err
	}
	self := strconv.Itoa(os.Getpid())
	for _, p := range pids {
		raw, err := os.ReadFile(p)
		if err != nil {
			continue // the process ended
		}
		// pid (comm) state ppid ... utime stime: comm may hold spaces, so split after its ')'.
		s := string(raw)
		open, closing := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || closing < open {
			continue
		}
		comm, pid := s[open+1:closing], strings.TrimSpace(s[:open])
		name := comm
		if pid == self {
			name = "bench"
		} else if !slices.Contains(names, comm) {
			continue
		}
		f := strings.Fields(s[closing+1:])
		if len(f) < 13 {
			return nil, fmt.Errorf("%s: %d fields after the command", p, len(f))
		}
		utime, err1 := strconv.ParseFloat(f[11], 64)
		stime, err2 := strconv.ParseFloat(f[12], 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("%s: utime %q stime %q", p, f[11], f[12])
		}
		out[name] += (utime + stime) / clockTicks
	}
	return out, nil
}

// cpuSpent formats what each program used between two readings, and the share of the run's
// wall time that is (200% is both cores).
func cpuSpent(before, after map[string]float64, wall float64) string {
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(after)) {
		d := after[name] - before[name]
		parts = append(parts, fmt.Sprintf("%s %.1fs (%.0f%%)", name, d, 100*d/wall))
	}
	return strings.Join(parts, ", ")
}
