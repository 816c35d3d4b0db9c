package scripts_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/config"
)

// load reads testdata/clusters/<name>.yaml through slipway's own loader.
func load(t *testing.T, name string) *v1beta1.Cluster {
	t.Helper()
	res, err := config.Load(context.Background(), config.Options{ManifestPath: filepath.Join("testdata", "clusters", name+".yaml")})
	if err != nil {
		t.Fatalf("loading %s: %v", name, err)
	}
	return res.Cluster
}
