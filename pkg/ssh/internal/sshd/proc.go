package sshd

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// descendants lists the PIDs below pid, children first, from /proc.
func descendants(pid int) []int {
	parent := map[int][]int{}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, f := range stats {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		// The command name may contain spaces: fields start after ")".
		s := string(data)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		fields := strings.Fields(s[i+1:])
		if len(fields) < 2 {
			continue
		}
		ppid, _ := strconv.Atoi(fields[1])
		self, _ := strconv.Atoi(filepath.Base(filepath.Dir(f)))
		parent[ppid] = append(parent[ppid], self)
	}
	var out []int
	var walk func(int)
	walk = func(p int) {
		for _, c := range parent[p] {
			out = append(out, c)
			walk(c)
		}
	}
	walk(pid)
	return out
}
