package hosts

import (
	"io"
	"net"
	"time"
)

// Forward copies every connection accepted on l to target (host:port) until l is closed. It
// lets servers reach something outside the cloud, such as a sandbox's package mirror and
// registry, at this machine's address on the external network, as a real cloud's servers reach
// the internet through their router. Failures to reach target go to logf.
func Forward(l net.Listener, target string, logf func(format string, args ...any)) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			u, err := net.DialTimeout("tcp", target, 10*time.Second)
			if err != nil {
				logf("forwarding %s from %s to %s: %v", l.Addr(), c.RemoteAddr(), target, err)
				return
			}
			defer u.Close()
			go func() {
				_, _ = io.Copy(u, c)
				// The client is done sending; the answer still flows back.
				if tc, ok := u.(*net.TCPConn); ok {
					_ = tc.CloseWrite()
				}
			}()
			_, _ = io.Copy(c, u)
		}()
	}
}
