package scripts

import "fmt"

// OS identifies a host's operating system, as /etc/os-release says (ID and VERSION_ID).
type OS struct {
	ID, VersionID string
}

// Family is a group of operating systems that share package management and file layout.
type Family string

// The supported families.
const (
	Debian  Family = "debian"
	RHEL    Family = "rhel"
	Flatcar Family = "flatcar"
)

var families = map[string]Family{
	"debian": Debian, "ubuntu": Debian,
	"rhel": RHEL, "rocky": RHEL, "centos": RHEL, "almalinux": RHEL,
	"flatcar": Flatcar,
}

// FamilyOf returns the family of os, or an error naming the supported systems.
func FamilyOf(os OS) (Family, error) {
	if f, ok := families[os.ID]; ok {
		return f, nil
	}
	return "", fmt.Errorf("unsupported operating system %q (version %q): slipway supports debian, ubuntu, rhel, rocky, centos, almalinux and flatcar", os.ID, os.VersionID)
}

// binDir is where binary installs put kubeadm, kubelet and kubectl: /usr is read-only on
// Flatcar.
func (f Family) binDir() string {
	if f == Flatcar {
		return "/opt/bin"
	}
	return "/usr/bin"
}
