// Package escape makes text that came from inputs (a KubeOne manifest, a host's output) safe to
// print on a terminal: unprintable runes, control characters and bidirectional overrides among
// them, and bytes that are not UTF-8 are written as Go escapes (\x1b, \n, \u202e, \x9b), so
// that a value cannot move the cursor, recolour the screen, hide text or forge lines of
// slipway's output.
package escape

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Controls returns s with every unprintable rune except those in keep, and every byte that is
// not UTF-8, written as it is in a Go string literal. Printable text, backslashes included, is
// left as it is.
func Controls(s, keep string) string {
	clean := true
	for i, r := range s {
		if !printed(s, i, r, keep) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i, r := range s {
		switch {
		case printed(s, i, r, keep):
			b.WriteRune(r)
		case r == utf8.RuneError:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		default:
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		}
	}
	return b.String()
}

// printed says whether the rune r at s[i] is printed as it is.
func printed(s string, i int, r rune, keep string) bool {
	if r == utf8.RuneError {
		_, size := utf8.DecodeRuneInString(s[i:])
		return size > 1 // U+FFFD itself, as the input wrote it
	}
	return unicode.IsPrint(r) || strings.ContainsRune(keep, r)
}
