package ssh

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// Quote returns s quoted for a POSIX shell. Words made only of characters
// that no shell treats specially are returned unchanged, so command lines
// stay readable in errors and verbose output.
func Quote(s string) string {
	if s == "" {
		return "''"
	}
	if safeWord.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

var (
	safeWord = regexp.MustCompile(`^[A-Za-z0-9_@%+=:,./-]+$`)
	envName  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	// owner is user or user:group, by name or number, as chown takes it.
	owner = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]*(:[A-Za-z0-9_][A-Za-z0-9_.-]*)?$`)
)

// quoteArgs quotes every word and joins them with spaces. A NUL byte cannot
// be passed through a shell at all, so it is rejected rather than mangled.
func quoteArgs(args []string) (string, error) {
	quoted := make([]string, len(args))
	for i, a := range args {
		if strings.ContainsRune(a, 0) {
			return "", fmt.Errorf("argument %d contains a NUL byte", i)
		}
		quoted[i] = Quote(a)
	}
	return strings.Join(quoted, " "), nil
}

// splitEnv validates KEY=value entries and returns them split. Names are
// validated rather than quoted: a name is never safe to quote into an
// assignment.
func splitEnv(env []string) (names, values []string, err error) {
	var errs []error
	for _, kv := range env {
		k, v, ok := strings.Cut(kv, "=")
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("environment entry %q is not KEY=value", k))
		case !envName.MatchString(k):
			errs = append(errs, fmt.Errorf("environment variable name %q is invalid (want [A-Za-z_][A-Za-z0-9_]*)", k))
		case strings.ContainsRune(v, 0):
			errs = append(errs, fmt.Errorf("environment variable %s contains a NUL byte", k))
		default:
			names = append(names, k)
			values = append(values, v)
		}
	}
	return names, values, errors.Join(errs...)
}

func validateOwner(o string) error {
	if o != "" && !owner.MatchString(o) {
		return fmt.Errorf("owner %q is invalid (want user or user:group)", o)
	}
	return nil
}
