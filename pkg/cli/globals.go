package cli

import (
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// readsAnnotation lists, in a command's annotations, the global flags it reads (comma
// separated). The global flags stay on the root, so that they may come before or after the
// command's name, but a command refuses one it does not read rather than ignore it, and its
// help leaves such flags out.
const readsAnnotation = "slipway.dev/reads-flags"

// The global flags.
const (
	flagManifest  = "manifest"
	flagTerraform = "tfjson"
	flagVerbose   = "verbose"
	flagLogFormat = "log-format"
)

var globalFlags = []string{flagManifest, flagTerraform, flagVerbose, flagLogFormat}

// readsInputs records that cmd reads the manifest and the Terraform output, and so prints
// warnings about them in the --log-format.
func readsInputs(cmd *cobra.Command) { reads(cmd, flagManifest, flagTerraform, flagLogFormat) }

// reads records that cmd reads the global flags named.
func reads(cmd *cobra.Command, flags ...string) {
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	have := strings.Split(cmd.Annotations[readsAnnotation], ",")
	for _, f := range flags {
		if !slices.Contains(have, f) {
			have = append(have, f)
		}
	}
	cmd.Annotations[readsAnnotation] = strings.Trim(strings.Join(have, ","), ",")
}

func readsFlag(cmd *cobra.Command, name string) bool {
	return slices.Contains(strings.Split(cmd.Annotations[readsAnnotation], ","), name)
}

// checkGlobalFlags refuses a global flag given to a command that does not read it.
func checkGlobalFlags(cmd *cobra.Command) error {
	for _, name := range globalFlags {
		f := cmd.Flags().Lookup(name)
		if f == nil || !f.Changed || readsFlag(cmd, name) {
			continue
		}
		return usageErrorf("%s does not read --%s (see %s --help)", cmd.CommandPath(), flagNames(f), cmd.CommandPath())
	}
	return nil
}

func flagNames(f *pflag.Flag) string {
	if f.Shorthand == "" {
		return f.Name
	}
	return f.Name + " (-" + f.Shorthand + ")"
}

// helpWithoutUnread wraps a help function so that a command's help lists only the global flags
// it reads; the root's lists them all.
func helpWithoutUnread(help func(*cobra.Command, []string)) func(*cobra.Command, []string) {
	return func(cmd *cobra.Command, args []string) {
		if cmd == cmd.Root() {
			help(cmd, args)
			return
		}
		var hidden []*pflag.Flag
		for _, name := range globalFlags {
			if f := cmd.Root().PersistentFlags().Lookup(name); f != nil && !f.Hidden && !readsFlag(cmd, name) {
				f.Hidden = true
				hidden = append(hidden, f)
			}
		}
		defer func() {
			for _, f := range hidden {
				f.Hidden = false
			}
		}()
		help(cmd, args)
	}
}
