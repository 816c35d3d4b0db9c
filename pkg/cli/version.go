package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/version"
)

func newVersionCommand(s Streams) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:     "version",
		Short:   "Print slipway's version and the Kubernetes versions it supports",
		Example: "  slipway version\n  slipway version -o json",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := outputFormat(output, "text", "json"); err != nil {
				return err
			}
			info := struct {
				version.Info
				Kubernetes string `json:"supportedKubernetes"`
			}{version.Get(), v1beta1.SupportedVersionsText}
			if output == "json" {
				return printJSON(s.Out, info)
			}
			fmt.Fprintf(s.Out, "slipway %s (commit %s, %s, %s)\nsupported Kubernetes: %s\n",
				info.Version, orUnknown(info.GitCommit), info.GoVersion, info.Platform, info.Kubernetes)
			return nil
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json")
	return cmd
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
