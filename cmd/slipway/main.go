// Command slipway installs, repairs, upgrades and resets Kubernetes clusters on hosts it reaches
// over SSH, as described by a cluster manifest and Terraform output.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/slipway-dev/slipway/pkg/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	root := cli.NewRootCommand(cli.Streams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr})
	err := root.ExecuteContext(ctx)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, cli.ErrorLine(root, err))
	}
	os.Exit(cli.ExitCode(err))
}
