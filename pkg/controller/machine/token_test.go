package machine

import (
	"regexp"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
)

func TestTokenID(t *testing.T) {
	re := regexp.MustCompile(`^[a-z0-9]{6}$`)
	m := &v1alpha1.Machine{ObjectMeta: metav1.ObjectMeta{UID: types.UID("3f1c2a9e-0000-4000-8000-000000000001")}}
	seen := map[string]bool{}
	for i := range tokenAttempts {
		id := tokenID(m, i)
		if !re.MatchString(id) {
			t.Fatalf("tokenID(%d) = %q, not six of [a-z0-9]", i, id)
		}
		if seen[id] {
			t.Fatalf("candidate %d repeats %s", i, id)
		}
		seen[id] = true
		if tokenID(m, i) != id {
			t.Fatalf("tokenID is not deterministic")
		}
	}
}
