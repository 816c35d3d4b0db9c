// Command assetd serves a sandbox's registry and files. The sandbox runs it as PID 1 of the assets
// container on the sandbox network, with the artifact cache mounted read-only at its host path.
//
//	assetd -registry :5000 -layout DIR... -files :8080 -route /prefix/=DIR...
package main

import (
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/slipway-dev/slipway/test/sandbox/assets"
)

type list []string

func (l *list) String() string     { return strings.Join(*l, ",") }
func (l *list) Set(v string) error { *l = append(*l, v); return nil }

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "assetd:", err)
		os.Exit(1)
	}
}

func run() error {
	var layouts, routes list
	regAddr := flag.String("registry", ":5000", "registry listen address")
	filesAddr := flag.String("files", ":8080", "file server listen address")
	flag.Var(&layouts, "layout", "OCI image layout to serve (repeatable)")
	flag.Var(&routes, "route", "URL prefix and directory, /prefix/=DIR (repeatable)")
	flag.Parse()

	reg, err := assets.Registry(layouts)
	if err != nil {
		return err
	}
	table := map[string]string{}
	for _, r := range routes {
		prefix, dir, ok := strings.Cut(r, "=")
		if !ok {
			return fmt.Errorf("route %q: want /prefix/=DIR", r)
		}
		table[prefix] = dir
	}
	files, err := assets.Files(table)
	if err != nil {
		return err
	}
	logger := log.New(os.Stdout, "", log.LstdFlags)
	errs := make(chan error, 2)
	go func() { errs <- http.ListenAndServe(*regAddr, assets.Logged(logger, reg)) }()
	go func() { errs <- http.ListenAndServe(*filesAddr, assets.Logged(logger, files)) }()
	logger.Printf("serving %d image layouts on %s and %d routes on %s", len(layouts), *regAddr, len(table), *filesAddr)
	// As PID 1 of its container, assetd gets no default signal handling: exit on stop.
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	select {
	case err := <-errs:
		return err
	case <-stop:
		return nil
	}
}
