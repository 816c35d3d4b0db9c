package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/slipway-dev/slipway/pkg/cloud/openstack/openstacktest"
)

// writeClientFiles writes what OpenStack clients read: openrc.sh (the OS_* variables, for
// `source`) and clouds.yaml with the cloud "slipway-sim" (for OS_CLOUD), both 0600: they hold
// the (simulated) password.
func writeClientFiles(dir string, sim *openstacktest.Sim) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	openrc := fmt.Sprintf(`export OS_AUTH_URL=%s
export OS_IDENTITY_API_VERSION=3
export OS_REGION_NAME=%s
export OS_USERNAME=%s
export OS_PASSWORD=%s
export OS_USER_DOMAIN_NAME=%s
export OS_PROJECT_DOMAIN_NAME=%s
export OS_PROJECT_NAME=%s
`, sim.AuthURL(), sim.Region(), openstacktest.Username, openstacktest.Password,
		openstacktest.DomainName, openstacktest.DomainName, openstacktest.ProjectName)
	cacert := ""
	if ca := sim.CACert(); ca != nil {
		path := filepath.Join(dir, "ca.pem")
		if err := os.WriteFile(path, ca, 0o644); err != nil {
			return err
		}
		openrc += "export OS_CACERT=" + path + "\n"
		cacert = "    cacert: " + path + "\n"
	}
	clouds := fmt.Sprintf(`clouds:
  slipway-sim:
    auth:
      auth_url: %s
      username: %s
      password: %s
      project_name: %s
      user_domain_name: %s
      project_domain_name: %s
    region_name: %s
    interface: public
    identity_api_version: 3
%s`, sim.AuthURL(), openstacktest.Username, openstacktest.Password, openstacktest.ProjectName,
		openstacktest.DomainName, openstacktest.DomainName, sim.Region(), cacert)
	for name, data := range map[string]string{"openrc.sh": openrc, "clouds.yaml": clouds} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
			return err
		}
	}
	return nil
}
