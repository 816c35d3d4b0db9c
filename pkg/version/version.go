// Package version reports the version of the slipway binaries, set at link time with
// -ldflags "-X github.com/slipway-dev/slipway/pkg/version.Version=v1.2.3" and otherwise read from
// the Go build information.
package version

import (
	"runtime"
	"runtime/debug"
)

// Version is the release version, set at link time.
var Version = ""

// Info describes a build.
type Info struct {
	Version   string `json:"version"`
	GitCommit string `json:"gitCommit,omitempty"`
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
}

// Get returns the build's version information.
func Get() Info {
	info := Info{Version: Version, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if info.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			info.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				info.GitCommit = s.Value
			}
		}
	}
	if info.Version == "" {
		info.Version = "dev"
	}
	return info
}

// ImageTag is the tag of images built alongside this binary, such as the machine-controller.
func ImageTag() string {
	v := Get().Version
	if v == "dev" {
		return "latest"
	}
	return v
}
