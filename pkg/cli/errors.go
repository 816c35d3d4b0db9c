package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/slipway-dev/slipway/pkg/config"
	"github.com/slipway-dev/slipway/pkg/internal/escape"
	"github.com/slipway-dev/slipway/pkg/progress"
)

// Exit codes. They are part of the command-line contract and documented in the README.
const (
	ExitOK          = 0
	ExitFailure     = 1 // the operation failed: a host, the cluster or the environment
	ExitUsage       = 2 // wrong command line: unknown command or flag, missing argument or manifest
	ExitConfig      = 3 // the manifest or the Terraform output is invalid
	ExitUnhealthy   = 4 // status or certificates check found the cluster unhealthy
	ExitInterrupted = 130
)

// exitCodes is the table of exit codes that the root command's help prints and the README's
// "Exit codes" section documents at length (a test keeps the two to the same codes).
var exitCodes = []struct {
	code    int
	meaning string
}{
	{ExitOK, "success"},
	{ExitFailure, "the operation failed: a host, the cluster or the environment"},
	{ExitUsage, "wrong command line: unknown command or flag, bad flag value, missing argument or -m"},
	{ExitConfig, "invalid manifest, Terraform output or other input file, checked before any host is reached"},
	{ExitUnhealthy, "status or certificates check found the cluster unhealthy (the problems are listed)"},
	{ExitInterrupted, "interrupted"},
}

// exitCodeTable renders exitCodes for the root command's help.
func exitCodeTable() string {
	var b strings.Builder
	b.WriteString("Exit codes:\n")
	for _, e := range exitCodes {
		fmt.Fprintf(&b, "  %3d  %s\n", e.code, e.meaning)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// UsageError is a wrong command line.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

func usageErrorf(format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...)}
}

// ErrorMessage is what main prints for err: "Error: " and its text with control characters
// escaped (a manifest, a host's output or a server's answer may carry some), newlines and tabs
// kept for lists of problems.
func ErrorMessage(err error) string {
	return "Error: " + escape.Controls(err.Error(), "\n\t")
}

// ErrorLine is what main prints for err once root has run: ErrorMessage, or under --log-format
// json one entry of level error, as the progress before it, so that automation reads every line
// of stderr alike.
func ErrorLine(root *cobra.Command, err error) string {
	f := root.PersistentFlags().Lookup(flagLogFormat)
	if f == nil || f.Value.String() != "json" {
		return ErrorMessage(err)
	}
	var b strings.Builder
	w := progress.NewWriter(&b)
	w.SetJSON()
	w.Log(progress.Entry{Level: progress.Error, Message: err.Error()}, "")
	return strings.TrimSuffix(b.String(), "\n")
}

// ExitCode maps an error returned by a command to the process exit code.
func ExitCode(err error) int {
	var ue *UsageError
	var ae *config.ArgumentError
	var ce *config.Error
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &ue), errors.As(err, &ae):
		return ExitUsage
	case errors.As(err, &ce):
		return ExitConfig
	case errors.Is(err, ErrUnhealthy):
		return ExitUnhealthy
	case errors.Is(err, context.Canceled):
		return ExitInterrupted
	}
	return ExitFailure
}
