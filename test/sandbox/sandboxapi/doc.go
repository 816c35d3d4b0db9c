// Package sandboxapi brings up and tears down a sandbox: bare Debian hosts running systemd, sshd
// and containerd as Docker containers on a private, internal network with fixed IPs, an optional
// haproxy load balancer, and an assets container that serves images, release downloads and apt
// repositories to them. It writes what slipway needs to reach the hosts (an SSH key, known_hosts,
// a Terraform output JSON and a demo manifest) into a state directory, and lets e2e tests stop,
// destroy and recreate single hosts. Every Docker object it creates carries the label
// dev.slipway.sandbox=<name>, and it touches no other object.
package sandboxapi
