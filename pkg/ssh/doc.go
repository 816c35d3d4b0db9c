// Package ssh owns everything slipway does to a host over SSH: connections
// (one cached per host, with keepalives and reconnects), ProxyJump bastion
// chains, host-key verification (pinned keys, known_hosts files and an
// explicit trust-on-first-use mode), authentication (key files with
// passphrases, ssh-agent, OpenSSH certificates), command and script
// execution shaped like os/exec with passwordless sudo, atomic streaming
// file transfer, tunnels for client-go and local port forwarding, and
// fan-out over many hosts.
//
// Callers program against the Host interface (and Hosts to get one per
// Target); the recording fake in package sshtest implements both for unit
// tests. Rendering scripts and configuration is not this package's job: it
// only ships strings and files.
//
// Choices worth knowing:
//
//   - Root: a non-root login user runs every command as `sudo -n -- ...`
//     (SudoAuto). The first use per connection runs `sudo -n true`, so a
//     sudo that wants a password is one clear ErrSudoPassword, never a hang.
//   - Commands: arguments are shell-quoted; Env travels as `env K=V` on the
//     command line. Scripts go to `bash -s` over stdin with Env as export
//     lines, so their values never appear in the host's process list.
//   - Cancellation: the login shell prints its PID and execs the command;
//     cancelling kills that process group from a second session. SSH
//     "signal" requests are not used because OpenSSH ignores them for root
//     logins. The login shell must be POSIX-like (sh, bash, dash, zsh).
//   - Files: SFTP when offered. Through sudo, OpenSSH's sftp-server is
//     started as a root command, so uploads land in root-owned directories
//     without a second copy. Otherwise `cat` streams the data. Either way
//     the data goes to a temporary file beside the target, which gets mode
//     and owner and is renamed over it only after the whole stream arrived.
package ssh
