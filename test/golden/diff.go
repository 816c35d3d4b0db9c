package golden

import (
	"bytes"
	"fmt"
	"strings"
)

const (
	around   = 3  // unchanged lines shown before and after the lines that differ
	maxLines = 20 // lines shown of each side's differing span
)

// Diff shows where want and got differ, compactly: the lines between the first and the last line
// that differ (at most maxLines of each side) with a few unchanged lines around them, under the
// number of the first line that differs. It is enough to see what changed in a golden file; it
// is not a minimal diff.
func Diff(want, got []byte) string {
	if bytes.Equal(want, got) {
		return ""
	}
	if bytes.Equal(bytes.TrimRight(want, "\n"), bytes.TrimRight(got, "\n")) {
		return fmt.Sprintf("only the newlines at the end differ: %d in the golden file, %d in the output\n",
			len(want)-len(bytes.TrimRight(want, "\n")), len(got)-len(bytes.TrimRight(got, "\n")))
	}
	w, g := lines(want), lines(got)
	first := 0
	for first < len(w) && first < len(g) && w[first] == g[first] {
		first++
	}
	// The common tail stops at first, so that the two never overlap.
	tail := 0
	for tail < len(w)-first && tail < len(g)-first && w[len(w)-1-tail] == g[len(g)-1-tail] {
		tail++
	}
	var b strings.Builder
	fmt.Fprintf(&b, "@@ line %d @@\n", first+1)
	for i := max(0, first-around); i < first; i++ {
		fmt.Fprintf(&b, "  %s\n", w[i])
	}
	span(&b, "-", w[first:len(w)-tail])
	span(&b, "+", g[first:len(g)-tail])
	for i := len(w) - tail; i < len(w)-tail+min(tail, around); i++ {
		fmt.Fprintf(&b, "  %s\n", w[i])
	}
	return b.String()
}

func span(b *strings.Builder, mark string, ls []string) {
	for i, l := range ls {
		if i == maxLines {
			fmt.Fprintf(b, "%s ... %d more lines\n", mark, len(ls)-maxLines)
			return
		}
		fmt.Fprintf(b, "%s %s\n", mark, l)
	}
}

// lines splits s into lines without their newlines; a final newline ends the last line rather
// than starting an empty one.
func lines(s []byte) []string {
	if len(s) == 0 {
		return nil
	}
	return strings.Split(strings.TrimSuffix(string(s), "\n"), "\n")
}
