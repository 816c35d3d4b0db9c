package cluster

import (
	"fmt"
	"os"

	"github.com/slipway-dev/slipway/pkg/addons"
	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/ccmdeploy"
	"github.com/slipway-dev/slipway/pkg/config"
	"github.com/slipway-dev/slipway/pkg/mcdeploy"
	"github.com/slipway-dev/slipway/pkg/phases"
	"github.com/slipway-dev/slipway/pkg/scripts"
)

// Inputs are what apply reads on this machine besides the manifest and the Terraform output:
// the registries' CA files, the S3 access key and CA file of etcd.snapshots.s3, the OpenStack
// credentials of the machine-controller and the cloud-controller-manager (OS_*, OS_CACERT's
// file, an http:// OS_AUTH_URL refused), machineController.imageArchive, and the manifests of
// addons.path, rendered and parsed. ReadInputs reads and checks them all before any host is
// reached, so that a missing variable or a bad file stops a run before the lock and the probe,
// not after. They hold secrets: never print them.
type Inputs struct {
	// RegistryCAs are the registries' tlsConfig.caFile contents, by registry name.
	RegistryCAs map[string][]byte
	// S3 is etcd.snapshots.s3's access key and CA, nil without it.
	S3 *scripts.S3Credentials
	// OpenStack is mcdeploy.Credentials' result, nil when neither the machine-controller nor
	// the cloud-controller-manager is deployed.
	OpenStack map[string]string
	// ImageArchive is the content hash of machineController.imageArchive, "" without one.
	ImageArchive string
	// Addons are the objects of addons.path, rendered; none without it. They may hold Secrets.
	Addons []addons.Object
}

// ReadInputs reads the inputs of c from its files and getenv (os.Getenv in apply). A problem
// is a config.Error (exit code 3) naming the field or variable at fault, never a value.
func ReadInputs(c *v1beta1.Cluster, getenv func(string) string) (*Inputs, error) {
	in := &Inputs{}
	var err error
	if in.RegistryCAs, err = registryCAs(c); err != nil {
		return nil, err
	}
	if s := c.Etcd.Snapshots; s != nil && s.S3 != nil {
		if in.S3, err = snapshotS3Credentials(s.S3, getenv); err != nil {
			return nil, err
		}
	}
	if (c.MachineController.Deploy != nil && *c.MachineController.Deploy) || ccmdeploy.Wanted(c) {
		if in.OpenStack, err = mcdeploy.Credentials(getenv); err != nil {
			return nil, &config.Error{Source: "the environment", Err: err}
		}
	}
	if in.ImageArchive, err = phases.ImageArchiveHash(c); err != nil {
		return nil, &config.Error{Source: "the manifest", Err: err}
	}
	if in.Addons, err = userAddons(c); err != nil {
		return nil, err
	}
	return in, nil
}

// readInputs is ReadInputs from slipway's own environment.
func readInputs(c *v1beta1.Cluster) (*Inputs, error) { return ReadInputs(c, os.Getenv) }

// registryCAs reads the registries' CA files, by registry name.
func registryCAs(c *v1beta1.Cluster) (map[string][]byte, error) {
	cas := map[string][]byte{}
	for name, r := range c.ContainerRuntime.Containerd.Registries {
		if r.TLSConfig != nil && r.TLSConfig.CAFile != "" {
			data, err := config.ReadCAFile(r.TLSConfig.CAFile)
			if err != nil {
				return nil, &config.Error{Source: "the manifest", Err: fmt.Errorf("containerRuntime.containerd.registries[%s].tlsConfig.caFile %s: %w", name, r.TLSConfig.CAFile, err)}
			}
			cas[name] = data
		}
	}
	return cas, nil
}

// snapshotS3Credentials reads the access key of etcd.snapshots.s3 from the environment and its
// CA file. Errors never repeat a credential.
func snapshotS3Credentials(s *v1beta1.SnapshotS3, getenv func(string) string) (*scripts.S3Credentials, error) {
	creds := &scripts.S3Credentials{AccessKeyID: getenv("AWS_ACCESS_KEY_ID"), SecretAccessKey: getenv("AWS_SECRET_ACCESS_KEY")}
	if creds.AccessKeyID == "" || creds.SecretAccessKey == "" {
		return nil, &config.Error{Source: "the environment", Err: fmt.Errorf("etcd.snapshots.s3 is set: %s", scripts.S3CredentialsHelp)}
	}
	if s.CAFile != "" {
		data, err := config.ReadCAFile(s.CAFile)
		if err != nil {
			return nil, &config.Error{Source: "the manifest", Err: fmt.Errorf("etcd.snapshots.s3.caFile %s: %w", s.CAFile, err)}
		}
		creds.CA = data
	}
	if err := creds.Check(); err != nil {
		return nil, &config.Error{Source: "the environment", Err: err}
	}
	return creds, nil
}
