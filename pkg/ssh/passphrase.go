package ssh

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/term"
)

// PassphraseEnv names the environment variable DefaultPassphrase reads.
const PassphraseEnv = "SLIPWAY_SSH_PASSPHRASE"

// ttyPath is the controlling terminal; tests point it elsewhere.
var ttyPath = "/dev/tty"

// PassphraseFunc returns the passphrase of an encrypted private key file.
// The pool calls it at most once per key file and caches the decrypted key.
type PassphraseFunc func(keyFile string) ([]byte, error)

// DefaultPassphrase reads $SLIPWAY_SSH_PASSPHRASE, or else prompts on the
// controlling terminal. Without either it fails and says how to provide one,
// rather than blocking a CI job on a prompt nobody sees.
func DefaultPassphrase(keyFile string) ([]byte, error) {
	if p, ok := os.LookupEnv(PassphraseEnv); ok {
		return []byte(p), nil
	}
	tty, err := os.OpenFile(ttyPath, os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("key %s is passphrase-protected: set %s or run on a terminal", keyFile, PassphraseEnv)
	}
	defer tty.Close()
	return PromptPassphrase(tty, keyFile)
}

// PromptPassphrase asks for the passphrase of keyFile on tty, without echo.
func PromptPassphrase(tty *os.File, keyFile string) ([]byte, error) {
	if !term.IsTerminal(int(tty.Fd())) {
		return nil, errors.New("not a terminal")
	}
	if _, err := fmt.Fprintf(tty, "Enter passphrase for %s: ", keyFile); err != nil {
		return nil, err
	}
	p, err := term.ReadPassword(int(tty.Fd()))
	fmt.Fprintln(tty)
	if err != nil {
		return nil, fmt.Errorf("reading the passphrase of %s: %w", keyFile, err)
	}
	return p, nil
}
