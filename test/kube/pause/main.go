// Command pause is the sandbox's pod infrastructure container: it holds a pod's namespaces open,
// reaps the zombies of processes that share its PID namespace, and exits on SIGINT or SIGTERM.
// It stands in for registry.k8s.io/pause, which cannot be pulled here. Like upstream's, it prints
// its version and exits for -v: kubeadm's upgrade health-check Job runs "pause -v" and waits for
// the Job to complete.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	for _, arg := range os.Args[1:] {
		if arg == "-v" {
			fmt.Println("pause (slipway sandbox)")
			return
		}
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for sig := range sigs {
		if sig != syscall.SIGCHLD {
			os.Exit(0)
		}
		reap()
	}
}

// reap collects every exited child without blocking: one SIGCHLD may stand for several exits.
func reap() {
	for {
		var status syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
	}
}
