package cli

import (
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// withSpelling adds to cmd a hidden subcommand name that is cmd itself, as another tool spells
// it (KubeOne's `config images list` for `config images`): build makes a fresh copy of cmd, so
// that the two share no flag values. flags maps the other tool's flag names to cmd's, where
// they mean the same.
func withSpelling(cmd *cobra.Command, name string, build func() *cobra.Command, flags map[string]string) *cobra.Command {
	alias := build()
	alias.Use = name
	alias.Hidden = true
	alias.Example = ""
	alias.Short = "the same as " + cmd.CommandPath() + " (" + name + " is KubeOne's spelling)"
	if len(flags) > 0 {
		alias.Flags().SetNormalizeFunc(func(_ *pflag.FlagSet, n string) pflag.NormalizedName {
			if to, ok := flags[n]; ok {
				return pflag.NormalizedName(to)
			}
			return pflag.NormalizedName(n)
		})
	}
	cmd.AddCommand(alias)
	return cmd
}
