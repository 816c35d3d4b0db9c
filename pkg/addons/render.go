package addons

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"net"
	"strconv"
	"strings"
	"text/template"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
)

//go:embed manifests/*.yaml
var manifestFS embed.FS

var manifests = template.Must(template.New("").Funcs(template.FuncMap{
	// json renders a value as a JSON scalar, which is also a valid YAML scalar: no value can
	// break out of its field.
	"json": func(v any) (string, error) {
		b, err := json.Marshal(v)
		return string(b), err
	},
	"lower": strings.ToLower,
	"dict":  dict,
	"list":  func(s ...string) []string { return s },
}).ParseFS(manifestFS, "manifests/*.yaml"))

// values are what the manifests are rendered from.
type values struct {
	PodSubnet       string
	FlannelBackend  string
	MTU             int
	APIHost         string
	APIPort         string
	KubeProxyFree   bool
	Images          map[string]string
	NetConf         string
	CanalCNIConf    string
	FlannelCNIConf  string
	CalicoCRDs      []calicoCRD
	CiliumConfigMap map[string]string
}

// Render returns the manifests of the cluster's CNI as a multi-document YAML stream, in the
// order to apply them. An external CNI renders nothing (nil).
func Render(c *v1beta1.Cluster) ([]byte, error) {
	cni := CNI(c)
	if cni == "external" {
		return nil, nil
	}
	if _, _, err := net.ParseCIDR(c.ClusterNetwork.PodSubnet); err != nil {
		return nil, fmt.Errorf("clusterNetwork.podSubnet %q: %w", c.ClusterNetwork.PodSubnet, err)
	}
	v := values{PodSubnet: c.ClusterNetwork.PodSubnet, Images: map[string]string{}}
	for key, ref := range map[string]string{"flannel": FlannelImage, "flannelCNIPlugin": FlannelCNIPluginImage,
		"calicoNode": CalicoNodeImage, "calicoCNI": CalicoCNIImage, "calicoKubeControllers": CalicoKubeControllersImage,
		"cilium": CiliumImage, "ciliumOperator": CiliumOperatorImage} {
		img, err := image(c, ref)
		if err != nil {
			return nil, err
		}
		v.Images[key] = img
	}
	var err error
	switch cni {
	case "flannel":
		err = v.flannel(c)
	case "canal":
		err = v.canal(c)
	case "cilium":
		err = v.cilium(c)
	}
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := manifests.ExecuteTemplate(&b, cni+".yaml", v); err != nil {
		return nil, fmt.Errorf("rendering the %s manifests: %w", cni, err)
	}
	return b.Bytes(), nil
}

// netConf is flannel's net-conf.json: the pod network and the backend.
func netConf(podSubnet, backend string) (string, error) {
	b, err := json.MarshalIndent(map[string]any{
		"Network":        podSubnet,
		"EnableNFTables": false,
		"Backend":        map[string]string{"Type": backend},
	}, "", "  ")
	return string(b), err
}

func (v *values) flannel(c *v1beta1.Cluster) error {
	v.FlannelBackend = c.ClusterNetwork.CNI.Flannel.Backend
	if v.FlannelBackend != "vxlan" && v.FlannelBackend != "host-gw" {
		return fmt.Errorf("flannel backend %q is not vxlan or host-gw", v.FlannelBackend)
	}
	var err error
	v.NetConf, err = netConf(v.PodSubnet, v.FlannelBackend)
	if err != nil {
		return err
	}
	// The bridge flannel delegates to, and portmap for hostPort.
	conf, err := json.MarshalIndent(map[string]any{
		"name":       "cbr0",
		"cniVersion": "0.3.1",
		"plugins": []any{
			map[string]any{"type": "flannel", "delegate": map[string]any{"hairpinMode": true, "isDefaultGateway": true}},
			map[string]any{"type": "portmap", "capabilities": map[string]bool{"portMappings": true}},
		},
	}, "", "  ")
	v.FlannelCNIConf = string(conf)
	return err
}

func apiEndpoint(c *v1beta1.Cluster) (string, string, error) {
	if c.APIEndpoint.Host == "" {
		return "", "", fmt.Errorf("apiEndpoint.host is empty")
	}
	port := c.APIEndpoint.Port
	if port == 0 {
		port = v1beta1.DefaultAPIPort
	}
	return c.APIEndpoint.Host, strconv.Itoa(port), nil
}

// dict builds a map from alternating keys and values, for ranging over pairs in a template.
// text/template ranges over maps in key order, so the output is stable.
func dict(kv ...string) (map[string]string, error) {
	if len(kv)%2 != 0 {
		return nil, fmt.Errorf("dict needs key-value pairs")
	}
	m := map[string]string{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m, nil
}
