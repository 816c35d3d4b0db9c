// Command netcheck is the workload of slipway's end-to-end tests. It runs as a container in the
// test cluster (built FROM scratch and imported into every node), so it is the only tool the
// tests have inside pods:
//
//	netcheck serve [-addr :8080]   answer GET / with the pod's hostname; on SIGTERM keep
//	                               serving for -linger (endpoints need a moment to drop the pod)
//	netcheck get URL...            GET each URL once; exit 1 on the first failure
//	netcheck lookup NAME           resolve NAME through the pod's DNS (CoreDNS)
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: netcheck serve|get|lookup ...")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "serve":
		err = serve(os.Args[2:])
	case "get":
		err = get(os.Args[2:])
	case "lookup":
		err = lookup(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "netcheck:", err)
		os.Exit(1)
	}
}

func serve(args []string) error {
	fs := flag.NewFlagSet("serve", flag.ExitOnError)
	addr := fs.String("addr", ":8080", "listen address")
	linger := fs.Duration("linger", 5*time.Second, "how long to keep serving after SIGTERM")
	_ = fs.Parse(args)
	host, _ := os.Hostname()
	srv := &http.Server{Addr: *addr, ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, host)
	})}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe() }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	// Keep answering while kube-proxy removes this pod from the Service's endpoints.
	time.Sleep(*linger)
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func get(urls []string) error {
	c := &http.Client{Timeout: 5 * time.Second}
	for _, u := range urls {
		resp, err := c.Get(u)
		if err != nil {
			return err
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET %s: %s", u, resp.Status)
		}
		fmt.Printf("%s %s", u, body)
	}
	return nil
}

func lookup(args []string) error {
	if len(args) != 1 {
		return errors.New("lookup needs one name")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupHost(ctx, args[0])
	if err != nil {
		return err
	}
	fmt.Println(args[0], addrs)
	return nil
}
