package ssh

import (
	"cmp"
	"slices"
	"strings"
	"sync"
)

// Secrets are values that must never show in verbose output or in errors: registry and proxy
// passwords from the manifest, and the bootstrap tokens and certificate keys a run creates.
// Wherever a command's line or output is shown (Options.Verbose, an ExitError's command and
// stderr), each is replaced by [redacted]. Secrets are passed to hosts over stdin or in files,
// never as arguments; this is the second guard, for output that repeats them. It is safe for
// concurrent use, and the nil *Secrets hides nothing.
type Secrets struct {
	mu     sync.RWMutex
	values []string
}

// minSecretLen keeps a value of one or two characters from garbling every line it occurs in;
// such a value protects nothing anyway.
const minSecretLen = 4

// redactedText replaces a secret.
const redactedText = "[redacted]"

// Add registers values to hide from now on.
func (s *Secrets) Add(values ...string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, v := range values {
		if len(v) >= minSecretLen && !slices.Contains(s.values, v) {
			s.values = append(s.values, v)
		}
	}
}

// Redact returns text with every registered value replaced, longest first, so that a secret
// containing another is hidden whole.
func (s *Secrets) Redact(text string) string {
	if s == nil {
		return text
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if len(s.values) == 0 {
		return text
	}
	byLength := slices.Clone(s.values)
	slices.SortFunc(byLength, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	var pairs []string
	for _, v := range byLength {
		pairs = append(pairs, v, redactedText)
	}
	return strings.NewReplacer(pairs...).Replace(text)
}
