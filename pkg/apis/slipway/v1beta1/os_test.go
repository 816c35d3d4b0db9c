package v1beta1

import (
	"strings"
	"testing"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
)

// TestOperatingSystemsDocumented: config print --full says which operating systems a pool may
// run, from the doc of workers[].providerSpec.operatingSystem; it must name exactly the list
// that validation, admission and the bootstrap renderer share (v1alpha1.OperatingSystems), and
// validation must refuse the ones it does not name.
func TestOperatingSystemsDocumented(t *testing.T) {
	doc := strings.Join(strings.Fields(FieldDoc("WorkerProviderSpec", "operatingSystem")), " ")
	if want := strings.Join(v1alpha1.OperatingSystems, " or ") + ", the operating systems whose user-data slipway renders and tests"; !strings.Contains(doc, want) {
		t.Errorf("the doc of operatingSystem does not say %q:\n%s", want, doc)
	}
	if !strings.Contains(Reference(), "# OperatingSystem of each machine: "+strings.Join(v1alpha1.OperatingSystems, " or ")) {
		t.Error("the reference manifest (config print --full) does not carry the doc of operatingSystem")
	}
	for _, name := range []string{"flatcar", "rhel", "rockylinux"} {
		s := &WorkerProviderSpec{CloudProviderSpec: OpenStackWorkerSpec{Flavor: "f", Image: "i"}, OperatingSystem: name}
		errs := validateWorkerSpec(s, nil)
		want := `operatingSystem: Unsupported value: "` + name + `": supported values: "ubuntu", "debian"`
		if len(errs) != 1 || errs[0].Error() != want {
			t.Errorf("%s: %v, want %s", name, errs, want)
		}
	}
}
