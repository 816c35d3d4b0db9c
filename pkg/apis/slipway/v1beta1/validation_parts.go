package v1beta1

import (
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"golang.org/x/crypto/ssh"
	"k8s.io/apimachinery/pkg/api/resource"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
)

var userRE = regexp.MustCompile(`^[a-z_][a-z0-9_.-]{0,31}$`)

func validateCloud(c *Cluster) field.ErrorList {
	p := field.NewPath("cloudProvider")
	if (c.CloudProvider.OpenStack != nil) == (c.CloudProvider.None != nil) {
		return field.ErrorList{field.Invalid(p, "openstack and none", "set exactly one of openstack or none")}
	}
	if c.CloudProvider.None != nil && c.CloudProvider.External {
		return field.ErrorList{field.Forbidden(p.Child("external"), "an external cloud controller manager needs a cloud provider other than none")}
	}
	var errs field.ErrorList
	if c.CloudProvider.OpenStack != nil && !c.CloudProvider.External {
		// Kubernetes has had no in-tree OpenStack provider since v1.26: without the external
		// cloud controller manager no one would initialize the Nodes of the cloud's servers.
		errs = append(errs, field.Required(p.Child("external"), "cloudProvider.openstack needs the external OpenStack cloud-controller-manager "+
			"(Kubernetes has no in-tree OpenStack provider): set cloudProvider.external: true"))
	}
	if c.CloudProvider.CloudConfig != "" {
		// Forbidden does not repeat the value, which holds credentials.
		errs = append(errs, field.Forbidden(p.Child("cloudConfig"), "not supported: the cloud-controller-manager's cloud.conf is built from the "+
			"OS_* credentials in the environment, never from the manifest; remove this field"))
	}
	return errs
}

func validateRuntime(c *Cluster) field.ErrorList {
	var errs field.ErrorList
	p := field.NewPath("containerRuntime", "containerd", "registries")
	for reg, r := range c.ContainerRuntime.Containerd.Registries {
		rp := p.Key(reg)
		if reg != "*" {
			if _, err := name.NewRegistry(reg, name.StrictValidation); err != nil || strings.ContainsAny(reg, "/ ") {
				errs = append(errs, field.Invalid(rp, reg, "must be a registry host name such as docker.io or registry.example.com:5000, or *"))
			}
		}
		for i, m := range r.Mirrors {
			mp := rp.Child("mirrors").Index(i)
			errs = append(errs, validateURL(m, mp, "http", "https")...)
			if u, err := url.Parse(m); err == nil && u.User != nil {
				// Mirrors go into hosts.toml, which every user on the host can read.
				errs = append(errs, field.Invalid(mp, RedactURL(m), "must not hold credentials: set them in auth, which is written where only root reads it"))
			}
		}
		if r.TLSConfig != nil && strings.ContainsAny(r.TLSConfig.CAFile, "\x00\n") {
			errs = append(errs, field.Invalid(rp.Child("tlsConfig", "caFile"), r.TLSConfig.CAFile, "must be a file path"))
		}
		if a := r.Auth; a != nil {
			if a.Auth == "" && a.IdentityToken == "" && (a.Username == "" || a.Password == "") {
				errs = append(errs, field.Required(rp.Child("auth"), "set username and password, auth, or identityToken"))
			}
		}
	}
	if rc := c.RegistryConfiguration; rc != nil && rc.OverwriteRegistry != "" {
		if _, err := name.NewRegistry(strings.SplitN(rc.OverwriteRegistry, "/", 2)[0], name.StrictValidation); err != nil {
			errs = append(errs, field.Invalid(field.NewPath("registryConfiguration", "overwriteRegistry"), rc.OverwriteRegistry, "must be a registry such as registry.example.com or registry.example.com:5000/mirror"))
		}
	}
	return append(errs, validateCredentialsOverHTTP(c)...)
}

// validateCredentialsOverHTTP refuses credentials that would cross plain http: containerd looks
// a registry's auth up by the host it talks to (the registry, Docker Hub's endpoint, each of its
// mirrors), so an http:// mirror on any of those hosts, whichever registry lists it, would be
// sent them in clear text. The registry whose credentials they are may allow it with
// insecureCredentials.
func validateCredentialsOverHTTP(c *Cluster) field.ErrorList {
	p := field.NewPath("containerRuntime", "containerd", "registries")
	regs := c.ContainerRuntime.Containerd.Registries
	owner := map[string]string{} // host → a registry whose credentials containerd sends there
	for _, reg := range slices.Sorted(maps.Keys(regs)) {
		r := regs[reg]
		if r.Auth == nil || r.InsecureCredentials {
			continue
		}
		hosts := []string{reg}
		if reg == "docker.io" {
			hosts = append(hosts, "registry-1.docker.io", "index.docker.io")
		}
		for _, m := range r.Mirrors {
			if u, err := url.Parse(m); err == nil {
				hosts = append(hosts, u.Host)
			}
		}
		for _, h := range hosts {
			if _, seen := owner[strings.ToLower(h)]; !seen {
				owner[strings.ToLower(h)] = reg
			}
		}
	}
	var errs field.ErrorList
	refuse := func(at *field.Path, value any, host string) {
		reg, ok := owner[strings.ToLower(host)]
		if !ok {
			return
		}
		errs = append(errs, field.Invalid(at, value, fmt.Sprintf(
			"is plain http, and containerd would send it the credentials of %s in clear text: use https, or set %s: true to accept that on a network you trust",
			p.Key(reg).Child("auth"), p.Key(reg).Child("insecureCredentials"))))
	}
	for _, reg := range slices.Sorted(maps.Keys(regs)) {
		for i, m := range regs[reg].Mirrors {
			if u, err := url.Parse(m); err == nil && u.Scheme == "http" {
				refuse(p.Key(reg).Child("mirrors").Index(i), RedactURL(m), u.Host)
			}
		}
	}
	// An insecure overwrite registry without an entry of its own is reached over http too.
	if rc := c.RegistryConfiguration; rc != nil && rc.OverwriteRegistry != "" && rc.InsecureRegistry {
		host := strings.SplitN(rc.OverwriteRegistry, "/", 2)[0]
		if _, ok := regs[host]; !ok {
			refuse(field.NewPath("registryConfiguration", "insecureRegistry"), true, host)
		}
	}
	return errs
}

func validateAssets(c *Cluster) field.ErrorList {
	p := field.NewPath("assets")
	a := c.Assets
	set := 0
	for _, on := range []bool{a.Packages != nil, a.URL != nil, a.Upload != nil} {
		if on {
			set++
		}
	}
	if set != 1 {
		return field.ErrorList{field.Invalid(p, fmt.Sprintf("%d sources", set), "set exactly one of packages, url or upload")}
	}
	switch {
	case a.Packages != nil:
		return validateDownloadURL(a.Packages.BaseURL, a.Packages.Insecure, p.Child("packages"))
	case a.URL != nil:
		return validateDownloadURL(a.URL.BaseURL, a.URL.Insecure, p.Child("url"))
	default:
		if a.Upload.Directory == "" || strings.ContainsAny(a.Upload.Directory, "\x00\n") {
			return field.ErrorList{field.Required(p.Child("upload", "directory"), "a directory holding kubeadm, kubelet and kubectl")}
		}
	}
	return nil
}

// validateDownloadURL checks the baseURL of an asset source: https, or http with insecure set
// on purpose, since whoever is on the path of a plain download can replace the binaries and
// the checksums or signing key that come with them.
func validateDownloadURL(s string, insecure bool, p *field.Path) field.ErrorList {
	if !insecure {
		if errs := validateURL(s, p.Child("baseURL"), "https", "http"); len(errs) > 0 {
			return errs
		}
		if strings.HasPrefix(s, "http://") {
			return field.ErrorList{field.Invalid(p.Child("baseURL"), RedactURL(s), fmt.Sprintf(
				"plain http lets anyone on the path replace the binaries and their checksums or signing key: use https, or set %s: true to accept that on a network you trust", p.Child("insecure")))}
		}
		return nil
	}
	return validateURL(s, p.Child("baseURL"), "https", "http")
}

func validateProxy(px *Proxy, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if px.HTTP != "" {
		errs = append(errs, validateURL(px.HTTP, p.Child("http"), "http", "https", "socks5")...)
	}
	if px.HTTPS != "" {
		errs = append(errs, validateURL(px.HTTPS, p.Child("https"), "http", "https", "socks5")...)
	}
	for i, entry := range strings.Split(px.NoProxy, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		if !regexp.MustCompile(`^[A-Za-z0-9.:/*_-]+$`).MatchString(entry) {
			errs = append(errs, field.Invalid(p.Child("noProxy"), px.NoProxy, fmt.Sprintf("entry %d (%q) must be a host name, IP address or CIDR", i+1, entry)))
		}
	}
	return errs
}

func validateWorkers(c *Cluster) field.ErrorList {
	var errs field.ErrorList
	p := field.NewPath("workers")
	if len(c.Workers) > 0 {
		if c.MachineController.Deploy == nil || !*c.MachineController.Deploy {
			errs = append(errs, field.Forbidden(field.NewPath("machineController", "deploy"), "workers need the machine-controller; set deploy: true or remove workers"))
		}
		if c.CloudProvider.OpenStack == nil {
			errs = append(errs, field.Forbidden(p, "workers need a cloud provider to create machines on; set cloudProvider.openstack, or use staticWorkers"))
		}
		if c.Assets.Upload != nil {
			errs = append(errs, field.Forbidden(field.NewPath("assets", "upload"), "workers boot on their own and nothing uploads to them; use assets.packages or assets.url with workers"))
		}
	}
	if img := c.MachineController.Image; img != "" {
		if _, err := name.ParseReference(img, name.StrictValidation); err != nil {
			errs = append(errs, field.Invalid(field.NewPath("machineController", "image"), img, "must be an image reference such as registry.example.com/machine-controller:v1.0.0"))
		}
	}
	if a := c.MachineController.ImageArchive; strings.ContainsAny(a, "\x00\n") {
		errs = append(errs, field.Invalid(field.NewPath("machineController", "imageArchive"), a, "must be a file path"))
	}
	seen := map[string]int{}
	for i, w := range c.Workers {
		wp := p.Index(i)
		errs = append(errs, validateDNSLabel(w.Name, wp.Child("name"))...)
		if j, dup := seen[w.Name]; dup && w.Name != "" {
			errs = append(errs, field.Duplicate(wp.Child("name"), fmt.Sprintf("%s (also workers[%d])", w.Name, j)))
		}
		seen[w.Name] = i
		if w.Replicas != nil && *w.Replicas < 0 {
			errs = append(errs, field.Invalid(wp.Child("replicas"), *w.Replicas, "must not be negative"))
		}
		if w.MinReadySeconds < 0 {
			errs = append(errs, field.Invalid(wp.Child("minReadySeconds"), w.MinReadySeconds, "must not be negative"))
		}
		if a := w.Autoscaler; a != nil {
			if a.Min < 0 || a.Max < a.Min || a.Max == 0 {
				errs = append(errs, field.Invalid(wp.Child("autoscaler"), fmt.Sprintf("min %d, max %d", a.Min, a.Max), "need 0 <= min <= max and max > 0"))
			} else if w.Replicas != nil && (*w.Replicas < a.Min || *w.Replicas > a.Max) {
				errs = append(errs, field.Invalid(wp.Child("replicas"), *w.Replicas, fmt.Sprintf("must lie within autoscaler bounds %d..%d", a.Min, a.Max)))
			}
		}
		if s := w.Strategy; s != nil {
			errs = append(errs, validateStrategy(s, wp.Child("strategy"))...)
		}
		errs = append(errs, validateWorkerSpec(&w.ProviderSpec, wp.Child("providerSpec"))...)
	}
	return errs
}

func validateStrategy(s *WorkerStrategy, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	surge, e1 := intOrPercent(s.MaxSurge, p.Child("maxSurge"))
	unavail, e2 := intOrPercent(s.MaxUnavailable, p.Child("maxUnavailable"))
	errs = append(errs, e1...)
	errs = append(errs, e2...)
	if len(e1)+len(e2) == 0 && surge == 0 && unavail == 0 {
		errs = append(errs, field.Invalid(p, "maxSurge 0, maxUnavailable 0", "maxSurge and maxUnavailable cannot both be 0: the rollout could never make progress"))
	}
	return errs
}

// intOrPercent validates an IntOrString and returns a value that is 0 only when it means 0.
func intOrPercent(v *IntOrString, p *field.Path) (int, field.ErrorList) {
	if v == nil {
		return 0, nil
	}
	if v.Type == intstr.Int {
		if v.IntVal < 0 {
			return 0, field.ErrorList{field.Invalid(p, v.IntVal, "must not be negative")}
		}
		return int(v.IntVal), nil
	}
	var pct int
	if _, err := fmt.Sscanf(v.StrVal, "%d%%", &pct); err != nil || fmt.Sprintf("%d%%", pct) != v.StrVal || pct < 0 || pct > 100 {
		return 0, field.ErrorList{field.Invalid(p, v.StrVal, "must be a number or a percentage from 0% to 100%")}
	}
	return pct, nil
}

func validateWorkerSpec(s *WorkerProviderSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	cs := p.Child("cloudProviderSpec")
	if s.CloudProviderSpec.Flavor == "" {
		errs = append(errs, field.Required(cs.Child("flavor"), ""))
	}
	if s.CloudProviderSpec.Image == "" {
		errs = append(errs, field.Required(cs.Child("image"), ""))
	}
	if d := s.CloudProviderSpec.RootDiskSizeGB; d != nil && (*d < 1 || *d > 65536) {
		errs = append(errs, field.Invalid(cs.Child("rootDiskSizeGB"), *d, "must be from 1 to 65536"))
	}
	errs = append(errs, validateLabels(s.CloudProviderSpec.Tags, cs.Child("tags"))...)
	if !slices.Contains(v1alpha1.OperatingSystems, s.OperatingSystem) {
		errs = append(errs, field.NotSupported(p.Child("operatingSystem"), s.OperatingSystem, v1alpha1.OperatingSystems))
	}
	for i, k := range s.SSHPublicKeys {
		errs = append(errs, validatePublicKey(k, p.Child("sshPublicKeys").Index(i))...)
	}
	errs = append(errs, validateLabels(s.Labels, p.Child("labels"))...)
	errs = append(errs, validateTaints(s.Taints, p.Child("taints"))...)
	errs = append(errs, validateAnnotations(s.Annotations, p.Child("annotations"))...)
	errs = append(errs, validateAnnotations(s.MachineObjectAnnotations, p.Child("machineObjectAnnotations"))...)
	return errs
}

func validateLabels(labels map[string]string, p *field.Path) field.ErrorList {
	return metavalidation.ValidateLabels(labels, p)
}

func validateAnnotations(a map[string]string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for k := range a {
		for _, msg := range validation.IsQualifiedName(strings.ToLower(k)) {
			errs = append(errs, field.Invalid(p.Key(k), k, msg))
		}
	}
	return errs
}

func validateTaints(taints []Taint, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	effects := []string{"NoSchedule", "PreferNoSchedule", "NoExecute"}
	for i, t := range taints {
		tp := p.Index(i)
		for _, msg := range validation.IsQualifiedName(t.Key) {
			errs = append(errs, field.Invalid(tp.Child("key"), t.Key, msg))
		}
		if t.Value != "" {
			for _, msg := range validation.IsValidLabelValue(t.Value) {
				errs = append(errs, field.Invalid(tp.Child("value"), t.Value, msg))
			}
		}
		ok := false
		for _, e := range effects {
			ok = ok || e == t.Effect
		}
		if !ok {
			errs = append(errs, field.NotSupported(tp.Child("effect"), t.Effect, effects))
		}
	}
	return errs
}

func validateKubelet(k *KubeletConfig, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, m := range []struct {
		v map[string]string
		n string
	}{{k.SystemReserved, "systemReserved"}, {k.KubeReserved, "kubeReserved"}} {
		for res, q := range m.v {
			if res != "cpu" && res != "memory" && res != "ephemeral-storage" && res != "pid" {
				errs = append(errs, field.NotSupported(p.Child(m.n).Key(res), res, []string{"cpu", "memory", "ephemeral-storage", "pid"}))
			}
			if _, err := resource.ParseQuantity(q); err != nil {
				errs = append(errs, field.Invalid(p.Child(m.n).Key(res), q, "must be a quantity such as 100m or 256Mi"))
			}
		}
	}
	for sig, v := range k.EvictionHard {
		if !regexp.MustCompile(`^[a-zA-Z]+(\.[a-zA-Z]+)*$`).MatchString(sig) {
			errs = append(errs, field.Invalid(p.Child("evictionHard").Key(sig), sig, "must be an eviction signal such as memory.available"))
		}
		if !regexp.MustCompile(`^[0-9.]+(%|[KMGTPE]i?)?$`).MatchString(v) {
			errs = append(errs, field.Invalid(p.Child("evictionHard").Key(sig), v, "must be a quantity or a percentage"))
		}
	}
	if k.MaxPods != nil && (*k.MaxPods < 1 || *k.MaxPods > 2500) {
		errs = append(errs, field.Invalid(p.Child("maxPods"), *k.MaxPods, "must be from 1 to 2500"))
	}
	return errs
}

func validateDNSLabel(s string, p *field.Path) field.ErrorList {
	if s == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Label(s) {
		errs = append(errs, field.Invalid(p, s, msg))
	}
	return errs
}

// userinfoRE finds the password of a URL that does not parse.
var userinfoRE = regexp.MustCompile(`(//[^/@:]*:)[^/@]*@`)

// RedactURL hides the password of a URL (a proxy's, typically) for messages and output.
func RedactURL(s string) string {
	if u, err := url.Parse(s); err == nil {
		return u.Redacted()
	}
	return userinfoRE.ReplaceAllString(s, "${1}xxxxx@")
}

func validateDNSSubdomain(s string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Subdomain(s) {
		errs = append(errs, field.Invalid(p, s, msg))
	}
	return errs
}

func validateUser(u string, p *field.Path) field.ErrorList {
	if !userRE.MatchString(u) {
		return field.ErrorList{field.Invalid(p, u, "must be a user name: lowercase letters, digits, '_', '.' or '-', starting with a letter or '_'")}
	}
	return nil
}

func validatePublicKey(k string, p *field.Path) field.ErrorList {
	if _, _, _, rest, err := ssh.ParseAuthorizedKey([]byte(k)); err != nil || len(strings.TrimSpace(string(rest))) > 0 {
		return field.ErrorList{field.Invalid(p, k, "must be one public key in authorized_keys format, e.g. \"ssh-ed25519 AAAA...\"")}
	}
	return nil
}

func validateURL(s string, p *field.Path, schemes ...string) field.ErrorList {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || strings.ContainsAny(s, " \t\n\"'`$\\;|&<>(){}") {
		return field.ErrorList{field.Invalid(p, RedactURL(s), "must be a URL such as https://example.com")}
	}
	for _, sc := range schemes {
		if u.Scheme == sc {
			return nil
		}
	}
	return field.ErrorList{field.NotSupported(p.Child("scheme"), u.Scheme, schemes)}
}

var (
	// bucketRE is S3's rule for bucket names: 3 to 63 lowercase letters, digits, dots and
	// hyphens, starting and ending with a letter or digit.
	bucketRE = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$`)
	// folderRE is what a key prefix may hold here: path segments of letters, digits, '.', '_'
	// and '-', so that keys need no escaping in URLs or on the hosts' command lines.
	folderRE = regexp.MustCompile(`^[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*/?$`)
	regionRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)
)

// validateSnapshotS3 checks etcd.snapshots.s3. A CA file is read later, when apply renders it.
func validateSnapshotS3(s *SnapshotS3, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s.Endpoint == "" {
		errs = append(errs, field.Required(p.Child("endpoint"), "the store's URL, e.g. https://s3.eu-central-1.amazonaws.com"))
	} else if e := validateURL(s.Endpoint, p.Child("endpoint"), "http", "https"); len(e) > 0 {
		errs = append(errs, e...)
	} else if u, _ := url.Parse(s.Endpoint); u.User != nil {
		errs = append(errs, field.Invalid(p.Child("endpoint"), RedactURL(s.Endpoint),
			"must not hold credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY in slipway's environment"))
	} else if strings.Trim(u.Path, "/") != "" || u.RawQuery != "" || u.Fragment != "" {
		errs = append(errs, field.Invalid(p.Child("endpoint"), s.Endpoint, "must be a scheme and host only (name the bucket in bucket, a prefix in folder)"))
	}
	if s.Bucket == "" {
		errs = append(errs, field.Required(p.Child("bucket"), "the bucket the snapshots are uploaded to"))
	} else if !bucketRE.MatchString(s.Bucket) || strings.Contains(s.Bucket, "..") {
		errs = append(errs, field.Invalid(p.Child("bucket"), s.Bucket, "must be an S3 bucket name: 3 to 63 lowercase letters, digits, '.' and '-', starting and ending with a letter or digit"))
	}
	if s.Folder != "" {
		if !folderRE.MatchString(s.Folder) || slices.Contains(strings.Split(s.Folder, "/"), "..") || slices.Contains(strings.Split(s.Folder, "/"), ".") {
			errs = append(errs, field.Invalid(p.Child("folder"), s.Folder, "must be a key prefix such as prod/etcd: segments of letters, digits, '.', '_' and '-' separated by '/', not starting with '/'"))
		}
	}
	if !regionRE.MatchString(s.Region) {
		errs = append(errs, field.Invalid(p.Child("region"), s.Region, "must be a region name such as us-east-1"))
	}
	if u, err := url.Parse(s.Endpoint); err == nil {
		if u.Scheme == "http" && s.CAFile != "" {
			errs = append(errs, field.Invalid(p.Child("caFile"), s.CAFile, "is for an https:// endpoint"))
		}
		switch {
		case u.Scheme == "http" && !s.Insecure:
			errs = append(errs, field.Invalid(p.Child("endpoint"), RedactURL(s.Endpoint), fmt.Sprintf(
				"plain http sends the snapshots, which hold every Secret of the cluster, unencrypted and lets anyone on the path replace or delete them: use https, or set %s: true to accept that on a network you trust", p.Child("insecure"))))
		case u.Scheme == "https" && s.Insecure:
			errs = append(errs, field.Invalid(p.Child("insecure"), true, "is for an http:// endpoint: an https endpoint's certificate is always verified (trust a private CA with caFile)"))
		}
	}
	return errs
}
