// Package plural writes counts of things as English says them: "1 host", "3 hosts", "0 hosts".
// Messages that count say it through here, so none reads "1 hosts".
package plural

import "strconv"

// Count is n and the noun: one (the singular) for 1, and otherwise the plural, which is one
// with an "s" unless many gives another ("entry", "entries").
func Count(n int, one string, many ...string) string {
	return strconv.Itoa(n) + " " + Noun(n, one, many...)
}

// Noun is the noun alone for n things, as Count chooses it.
func Noun(n int, one string, many ...string) string {
	switch {
	case n == 1 || n == -1:
		return one
	case len(many) > 0:
		return many[0]
	}
	return one + "s"
}
