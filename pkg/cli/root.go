// Package cli holds slipway's command-line interface: one file per command, each a thin adapter
// that parses flags, calls the packages that do the work and prints their results. No business
// logic lives here, and nothing here prints an error: commands return them to main.
package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/slipway-dev/slipway/pkg/progress"
)

// Streams are the command's standard streams.
type Streams struct {
	In  io.Reader
	Out io.Writer
	Err io.Writer
}

// globalOptions are flags every command shares.
type globalOptions struct {
	manifest  string
	terraform string
	verbose   bool
	logFormat string
	// log is the commands' standard error, where progress goes: text, or JSON entries with
	// --log-format json.
	log *progress.Writer
}

// jsonLog reports whether progress is JSON entries (--log-format json).
func (g *globalOptions) jsonLog() bool { return g.log.JSON() }

// progress is where a command that prints progress for people on stdout (apply, reset, -v)
// prints it: stdout, or with --log-format json stderr's entries, leaving stdout to the result.
func (g *globalOptions) progress(s Streams) io.Writer {
	if g.jsonLog() {
		return s.Err
	}
	return s.Out
}

// NewRootCommand builds the slipway command tree.
func NewRootCommand(s Streams) *cobra.Command {
	g := &globalOptions{log: progress.NewWriter(s.Err)}
	s.Err = g.log
	root := &cobra.Command{
		Use:   "slipway",
		Short: "Install, upgrade and repair Kubernetes clusters over SSH with kubeadm",
		Long: `slipway turns a cluster manifest plus your Terraform output into a running Kubernetes
cluster on hosts it reaches over SSH, keeps it converged (install, repair, upgrade), and
manages OpenStack worker pools through its in-cluster machine-controller.

` + exitCodeTable(),
		Example: `  # Start a manifest, then see what it expands to with your Terraform output
  slipway init --shape openstack
  slipway config dump -m cluster.yaml -t ./terraform

  # Show the MachineDeployments the worker pools become
  slipway config machinedeployments -m cluster.yaml -t tf.json`,
		SilenceErrors:     true,
		SilenceUsage:      true,
		Args:              noUnknownCommand,
		RunE:              helpOrUnknown,
		CompletionOptions: cobra.CompletionOptions{HiddenDefaultCmd: false},
	}
	root.SetIn(s.In)
	root.SetOut(s.Out)
	root.SetErr(s.Err)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &UsageError{Err: fmt.Errorf("%w (see %s --help)", err, c.CommandPath())}
	})
	pf := root.PersistentFlags()
	pf.StringVarP(&g.manifest, flagManifest, "m", "", "cluster manifest file (- for stdin)")
	pf.StringVarP(&g.terraform, flagTerraform, "t", "", "Terraform output: a file written by 'terraform output -json', - for stdin, or a Terraform directory")
	pf.BoolVarP(&g.verbose, flagVerbose, "v", false, "stream remote output, prefixed with [host]")
	pf.StringVarP(&g.logFormat, flagLogFormat, "l", "text", "progress and warnings on stderr: text, or json for automation (one object a line: time, level, host, step, message)")
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		if err := checkGlobalFlags(cmd); err != nil {
			return err
		}
		switch g.logFormat {
		case "text":
		case "json":
			g.log.SetJSON()
		default:
			return usageErrorf("--log-format %q is not supported; use text or json", g.logFormat)
		}
		return nil
	}
	root.SetHelpFunc(helpWithoutUnread(root.HelpFunc()))

	root.AddCommand(
		newInitCommand(s),
		newApplyCommand(g, s),
		newResetCommand(g, s),
		newStatusCommand(g, s),
		newEtcdCommand(g, s),
		newBackupCommand(g, s),
		newCertificatesCommand(g, s),
		withSpelling(newKubeconfigCommand(g, s), "generate", func() *cobra.Command { return newKubeconfigCommand(g, s) },
			map[string]string{"cn": "user", "on": "group"}),
		newProxyCommand(g, s),
		newConfigCommand(g, s),
		newMirrorImagesCommand(g, s),
		newVersionCommand(s),
	)
	return root
}

// noUnknownCommand rejects arguments to commands that only have subcommands.
// noArgs refuses positional arguments to a command that takes none, as a usage error.
func noArgs(c *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	return &UsageError{Err: fmt.Errorf("%s takes no arguments, got %q (see %s --help)", c.CommandPath(), args, c.CommandPath())}
}

func noUnknownCommand(c *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	msg := fmt.Sprintf("unknown command %q for %q", args[0], c.CommandPath())
	if c.SuggestionsMinimumDistance <= 0 {
		c.SuggestionsMinimumDistance = 2
	}
	if s := c.SuggestionsFor(args[0]); len(s) > 0 {
		msg += "; did you mean " + strings.Join(s, " or ") + "?"
	}
	return &UsageError{Err: fmt.Errorf("%s (see %s --help)", msg, c.CommandPath())}
}

// helpOrUnknown is the body of commands that only group subcommands.
func helpOrUnknown(c *cobra.Command, args []string) error {
	return c.Help()
}

// outputFormat validates an --output value.
func outputFormat(v string, allowed ...string) error {
	for _, a := range allowed {
		if v == a {
			return nil
		}
	}
	return usageErrorf("--output %q is not supported; use one of %s", v, strings.Join(allowed, ", "))
}

// printJSON writes v as indented JSON, what -o json prints.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// printRows prints items as indented JSON when output is "json", and otherwise as a table: the
// tab-separated header, then one line per item that row writes (tab-separated, with its newline).
func printRows[T any](w io.Writer, output string, items []T, header string, row func(io.Writer, T)) error {
	if output == "json" {
		return printJSON(w, items)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, header)
	for _, it := range items {
		row(tw, it)
	}
	return tw.Flush()
}
