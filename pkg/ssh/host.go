package ssh

import (
	"context"
	"io"
	"io/fs"
	"net"
)

// Host is what callers program against: a Conn from a Pool, or a fake
// from package sshtest in unit tests.
type Host interface {
	// Name identifies the host in errors and output.
	Name() string
	// Command prepares name with args, which are shell-quoted.
	Command(ctx context.Context, name string, args ...string) *Cmd
	// Script prepares a script sent over stdin to `bash -s`; name labels
	// it in errors and output.
	Script(ctx context.Context, name, script string) *Cmd
	// Upload streams src to the file dst, atomically: readers of dst see
	// the old file or the whole new one. mode 0 means 0644; owner is
	// "user" or "user:group", empty for the file's default owner.
	Upload(ctx context.Context, src io.Reader, dst string, mode fs.FileMode, owner string) error
	// Download streams the file src to dst.
	Download(ctx context.Context, src string, dst io.Writer) error
	// DialContext opens a connection from the host to addr, for client-go's
	// rest.Config.Dial or an http.Transport.
	DialContext(ctx context.Context, network, addr string) (net.Conn, error)
}
