package sandboxapi

import (
	"context"
	"fmt"
	"strings"
)

// writeFiles writes known_hosts, tf.json, slipway.yaml and state.json into the state directory.
func (sb *Sandbox) writeFiles(context.Context) error {
	var kh strings.Builder
	for _, h := range sb.Hosts {
		if h.HostKey != "" {
			fmt.Fprintf(&kh, "%s %s\n", h.IP, h.HostKey)
		}
	}
	tf, err := sb.tfOutput()
	if err != nil {
		return err
	}
	manifest, err := sb.manifest()
	if err != nil {
		return err
	}
	for name, data := range map[string][]byte{KnownHostsFile: []byte(kh.String()), TFOutputFile: tf, ManifestFile: manifest} {
		if err := writeFile(sb.Path(name), data, 0o644); err != nil {
			return err
		}
	}
	return sb.save()
}
