package scripts

import (
	"fmt"
	"strings"
)

// Quote returns s as one single-quoted shell word. It rejects NUL bytes and newlines: no
// value slipway puts in a script needs them, and a newline could end a heredoc or a comment.
func Quote(s string) (string, error) {
	if err := checkValue(s); err != nil {
		return "", err
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'", nil
}

func checkValue(s string) error {
	if strings.ContainsAny(s, "\x00\n\r") {
		return fmt.Errorf("value %q contains a NUL byte or a line break", s)
	}
	return nil
}

// quoteAll quotes each value and joins them with spaces, for a bash array or word list.
func quoteAll(values []string) (string, error) {
	out := make([]string, 0, len(values))
	for _, v := range values {
		q, err := Quote(v)
		if err != nil {
			return "", err
		}
		out = append(out, q)
	}
	return strings.Join(out, " "), nil
}
