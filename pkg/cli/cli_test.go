package cli

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/crypto/ssh"
)

// run executes the command tree in-process and returns stdout, stderr and the exit code main
// would use.
func run(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	return runContext(t, context.Background(), stdin, args...)
}

// runContext is run with ctx, which main cancels on SIGINT and SIGTERM.
func runContext(t *testing.T, ctx context.Context, stdin string, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	cmd := NewRootCommand(Streams{In: strings.NewReader(stdin), Out: &out, Err: &errb})
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(ctx)
	if err != nil {
		errb.WriteString(ErrorLine(cmd, err) + "\n")
	}
	return out.String(), errb.String(), ExitCode(err)
}

func TestConfigPrintFullLoadsBack(t *testing.T) {
	full, _, code := run(t, "", "config", "print", "--full")
	if code != 0 || !strings.Contains(full, "# ") {
		t.Fatalf("config print --full: code %d", code)
	}
	f := filepath.Join(t.TempDir(), "f.yaml")
	if err := os.WriteFile(f, []byte(full), 0o600); err != nil {
		t.Fatal(err)
	}
	dump, stderr, code := run(t, "", "config", "dump", "-m", f)
	if code != 0 {
		t.Fatalf("config dump of the full reference: code %d\n%s", code, stderr)
	}
	// The dump itself must load again, unchanged.
	g := filepath.Join(t.TempDir(), "g.yaml")
	if err := os.WriteFile(g, []byte(dump), 0o600); err != nil {
		t.Fatal(err)
	}
	dump2, stderr, code := run(t, "", "config", "dump", "-m", g)
	if code != 0 || dump2 != dump {
		t.Fatalf("dump does not round-trip (code %d): %s", code, stderr)
	}
}

func TestConfigMachineDeployments(t *testing.T) {
	out, stderr, code := run(t, "", "config", "machinedeployments", "-m", "../../examples/openstack.yaml", "-t", "../../examples/openstack-tf-output.json")
	if code != 0 {
		t.Fatalf("code %d: %s", code, stderr)
	}
	for _, want := range []string{"kind: MachineDeployment", "namespace: kube-system", "workerset: pool1", "kubelet: 1.36.3",
		"flavor: m1.large", "network: demo-net", "maxSurge: 1", "cloudProvider: openstack"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	js, _, code := run(t, "", "config", "md", "-o", "json", "-m", "../../examples/openstack.yaml", "-t", "../../examples/openstack-tf-output.json")
	var list struct {
		Items []map[string]any `json:"items"`
	}
	if code != 0 || json.Unmarshal([]byte(js), &list) != nil || len(list.Items) != 1 {
		t.Fatalf("json output: code %d, %s", code, js)
	}
}

func TestExitCodesAndMessages(t *testing.T) {
	write := tempWriter(t)
	head := "apiVersion: slipway.dev/v1beta1\nkind: Cluster\nname: x\nversions: {kubernetes: v1.36.3}\n"
	host := "controlPlane: {hosts: [{publicAddress: 10.0.0.1, sshPrivateKeyFile: id%s}]}\n"
	sum := sha256.Sum256([]byte("data"))
	goodSnapshot := "data" + string(sum[:])
	climbing := func() string {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		tw := tar.NewWriter(zw)
		_ = tw.WriteHeader(&tar.Header{Name: "pki/../../etc/cron.d/x", Typeflag: tar.TypeReg, Mode: 0o644, Size: 2})
		_, _ = tw.Write([]byte("x\n"))
		_ = tw.Close()
		_ = zw.Close()
		return b.String()
	}()
	// A cluster whose one host refuses SSH at once (a closed port on loopback), with a key that
	// parses: status finds it unhealthy, and an interrupted command stops.
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	key := write("id_ed25519", sshKey(t))
	closed := write("closed.yaml", head+"controlPlane: {hosts: [{publicAddress: 127.0.0.1, sshPort: 1, sshPrivateKeyFile: "+key+"}]}\n")
	existing := write("existing.db", "an earlier snapshot")
	// interrupted names the cases run as after SIGINT (a canceled context).
	interrupted := map[string]bool{"status: interrupted": true, "certificates check: interrupted": true, "etcd members: interrupted": true}
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"unknown command", []string{"aply"}, ExitUsage, `unknown command "aply" for "slipway"`},
		{"status: an unreachable host is unhealthy", []string{"status", "-m", closed, "--ssh-connect-timeout", "1ms"}, ExitUnhealthy,
			"the cluster is not healthy: 3 problems"},
		{"certificates check: an unreadable control plane", []string{"certificates", "check", "-m", closed, "--ssh-connect-timeout", "1ms"}, ExitUnhealthy,
			"the cluster is not healthy"},
		{"etcd snapshot: the file exists", []string{"etcd", "snapshot", "-m", closed, "--file", existing}, ExitFailure, "exists: slipway does not overwrite a snapshot"},
		{"etcd members: no control plane answers", []string{"etcd", "members", "-m", closed, "--ssh-connect-timeout", "1ms"}, ExitFailure, "connection refused"},
		{"status: interrupted", []string{"status", "-m", closed}, ExitInterrupted, "status interrupted: context canceled"},
		{"certificates check: interrupted", []string{"certificates", "check", "-m", closed}, ExitInterrupted, "certificates check interrupted: context canceled"},
		{"etcd members: interrupted", []string{"etcd", "members", "-m", closed}, ExitInterrupted, "operation was canceled"},
		{"apply: bad output format", []string{"apply", "-o", "yaml", "-m", "x"}, ExitUsage, `--output "yaml" is not supported`},
		{"config machinedeployments: bad output format", []string{"config", "machinedeployments", "-o", "text", "-m", "x"}, ExitUsage, `--output "text" is not supported`},
		{"config migrate: bad output format", []string{"config", "migrate", "--from-kubeone", "k.yaml", "-o", "text"}, ExitUsage, `--output "text" is not supported`},
		{"mirror-images: bad output format", []string{"mirror-images", "a.example", "-o", "yaml", "-m", "x"}, ExitUsage, `--output "yaml" is not supported`},
		{"version: bad output format", []string{"version", "-o", "yaml"}, ExitUsage, `--output "yaml" is not supported`},
		{"unknown flag", []string{"config", "dump", "--nope"}, ExitUsage, "unknown flag: --nope"},
		{"bad output format", []string{"config", "dump", "-o", "xml", "-m", "x"}, ExitUsage, `--output "xml" is not supported`},
		{"zero pools timeout", []string{"apply", "--pools-timeout", "0s", "-m", "x"}, ExitUsage, "--pools-timeout 0s: must be positive"},
		{"no manifest", []string{"config", "dump"}, ExitUsage, "pass -m/--manifest"},
		{"a manifest path with control characters", []string{"config", "dump", "-m", "/nonexistent/\x1b[2Jx\ty.yaml"}, ExitConfig, `/nonexistent/\x1b[2Jx` + "\t" + `y.yaml is invalid`},
		{"unknown field", []string{"config", "dump", "-m", write("a.yaml", head+"bogus: 1\n"+strings.ReplaceAll(host, "%s", ""))}, ExitConfig, "bogus: Forbidden"},
		{"bad cidr", []string{"config", "dump", "-m", write("b.yaml", head+"clusterNetwork: {podSubnet: 10.0.0/8}\n"+strings.ReplaceAll(host, "%s", ""))}, ExitConfig, "clusterNetwork.podSubnet: Invalid value"},
		{"unsupported version", []string{"config", "dump", "-m", write("c.yaml", strings.Replace(head, "v1.36.3", "v1.29.0", 1)+strings.ReplaceAll(host, "%s", ""))}, ExitConfig, "versions.kubernetes"},
		{"duplicate host", []string{"config", "dump", "-m", write("d.yaml", head+"apiEndpoint: {host: lb}\ncontrolPlane: {hosts: [{publicAddress: 10.0.0.1, sshPrivateKeyFile: id}, {publicAddress: 10.0.0.1, sshPrivateKeyFile: id}]}\n")}, ExitConfig, "controlPlane.hosts[1].publicAddress: Duplicate value"},
		{"injection", []string{"config", "dump", "-m", write("e.yaml", head+strings.ReplaceAll(host, "%s", `, hostname: "a;rm -rf /"`))}, ExitConfig, `controlPlane.hosts[0].hostname: Invalid value: "a;rm -rf /"`},
		{"bad terraform", []string{"config", "dump", "-m", write("f.yaml", head), "-t", write("tf.json", `{"slipway_hosts": {"value": {"control_plane": {"public_addresses": []}}}}`)}, ExitConfig, "slipway_hosts.value.control_plane.public_addresses"},
		{"images: no manifest", []string{"config", "images"}, ExitUsage, "pass -m/--manifest"},
		{"images: missing manifest", []string{"config", "images", "-m", "/nonexistent/cluster.yaml"}, ExitConfig, "/nonexistent/cluster.yaml is invalid: reading manifest"},
		{"images: unknown field", []string{"config", "images", "-m", write("g.yaml", head+"bogus: 1\n"+strings.ReplaceAll(host, "%s", ""))}, ExitConfig, "bogus: Forbidden"},
		{"images: openstack without external", []string{"config", "images", "-m", write("h.yaml", head+"cloudProvider: {openstack: {}}\n"+strings.ReplaceAll(host, "%s", ""))}, ExitConfig, "cloudProvider.external: Required value"},
		{"images: bad overwriteRegistry", []string{"config", "images", "-m", write("i.yaml", head+"registryConfiguration: {overwriteRegistry: \"Bad Registry\"}\n"+strings.ReplaceAll(host, "%s", ""))}, ExitConfig, "registryConfiguration.overwriteRegistry"},
		{"images: bad output format", []string{"config", "images", "-o", "yaml", "-m", "x"}, ExitUsage, `--output "yaml" is not supported`},
		{"images: bad terraform", []string{"config", "images", "-m", write("j.yaml", head), "-t", write("tf2.json", `{"slipway_hosts": {"value": {"control_plane": {"public_addresses": []}}}}`)}, ExitConfig, "slipway_hosts.value.control_plane.public_addresses"},
		{"version json", []string{"version", "-o", "json"}, ExitOK, ""},
		{"version reads no manifest", []string{"version", "-m", "x"}, ExitUsage, "slipway version does not read --manifest (-m) (see slipway version --help)"},
		{"config print reads no Terraform output", []string{"config", "print", "-t", "tf.json"}, ExitUsage, "slipway config print does not read --tfjson (-t)"},
		{"config dump reaches no host", []string{"config", "dump", "-v", "-m", "x"}, ExitUsage, "slipway config dump does not read --verbose (-v)"},
		{"config migrate reads --from-kubeone, not -m", []string{"config", "migrate", "--from-kubeone", "k.yaml", "-m", "x"}, ExitUsage, "slipway config migrate does not read --manifest (-m)"},
		{"global flags before the command", []string{"-m", "../../examples/single-node.yaml", "config", "dump", "-o", "json"}, ExitOK, ""},
		{"-v before the command", []string{"-v", "status"}, ExitUsage, "pass -m/--manifest"},
		{"status: bad output format", []string{"status", "-o", "yaml", "-m", "x"}, ExitUsage, `--output "yaml" is not supported`},
		{"status: no manifest", []string{"status"}, ExitUsage, "pass -m/--manifest"},
		{"etcd: unknown subcommand", []string{"etcd", "restore"}, ExitUsage, `unknown command "restore" for "slipway etcd"`},
		{"etcd snapshot without a file", []string{"etcd", "snapshot", "-m", "x"}, ExitUsage, "snapshot needs --file FILE"},
		{"etcd snapshot: -o json is a format, not a file", []string{"etcd", "snapshot", "-o", "json", "-m", "x"}, ExitUsage, "snapshot needs --file FILE"},
		{"etcd snapshot: the old -o FILE", []string{"etcd", "snapshot", "-o", "etcd.db", "-m", "x"}, ExitUsage,
			`--output "etcd.db" is not an output format (text or json): the snapshot's file is given with --file, as in slipway etcd snapshot --file etcd.db`},
		{"kubeconfig: --group without --user", []string{"kubeconfig", "--group", "dev", "-m", "x"}, ExitUsage, "--group, --ttl and --allow-system-identity need --user"},
		{"kubeconfig: --allow-system-identity without --user", []string{"kubeconfig", "--allow-system-identity", "-m", "x"}, ExitUsage, "need --user"},
		{"kubeconfig: system:masters", []string{"kubeconfig", "--user", "jane", "--group", "system:masters", "--allow-system-identity", "--file", "j", "-m", "x"}, ExitUsage, "--group system:masters would make a cluster administrator"},
		{"kubeconfig: the nodes' group", []string{"kubeconfig", "--user", "jane", "--group", "system:nodes", "--file", "j", "-m", "x"}, ExitUsage, "pass --allow-system-identity if you mean it"},
		{"kubeconfig: a node's name", []string{"kubeconfig", "--user", "system:node:cp-1", "--file", "j", "-m", "x"}, ExitUsage, "--user system:node:cp-1: names starting with system:"},
		{"kubeconfig: a TTL past the signer's", []string{"kubeconfig", "--user", "jane", "--ttl", "87600h", "--file", "j", "-m", "x"}, ExitUsage, "at most 8760h0m0s (a year, kube-controller-manager's --cluster-signing-duration)"},
		{"kubeconfig: a user's key, nowhere to write it", []string{"kubeconfig", "--user", "jane", "-m", "x"}, ExitUsage, "--user makes a private key: write the kubeconfig with --file FILE (mode 0600), or print it with --file -"},
		{"certificates: unknown subcommand", []string{"certificates", "rotate"}, ExitUsage, `unknown command "rotate" for "slipway certificates"`},
		{"certificates check: bad output format", []string{"certificates", "check", "-o", "yaml", "-m", "x"}, ExitUsage, `--output "yaml" is not supported`},
		{"etcd members: bad output format", []string{"etcd", "members", "-o", "yaml", "-m", "x"}, ExitUsage, `--output "yaml" is not supported`},
		{"etcd defragment: bad output format", []string{"etcd", "defragment", "-o", "yaml", "-m", "x"}, ExitUsage, `--output "yaml" is not supported`},
		{"etcd defragment: an argument", []string{"etcd", "defragment", "cp-1", "-m", "x"}, ExitUsage, `slipway etcd defragment takes no arguments, got ["cp-1"]`},
		{"etcd disarm: neither a member nor --all", []string{"etcd", "disarm", "-m", "x"}, ExitUsage, "slipway etcd disarm needs a MEMBER, or --all for every member"},
		{"etcd disarm: a member and --all", []string{"etcd", "disarm", "cp-1", "--all", "-m", "x"}, ExitUsage, "slipway etcd disarm takes a MEMBER or --all, not both"},
		{"etcd disarm: two members", []string{"etcd", "disarm", "cp-1", "cp-2", "-m", "x"}, ExitUsage, `slipway etcd disarm takes one MEMBER, got ["cp-1" "cp-2"]`},
		{"etcd disarm: an empty member", []string{"etcd", "disarm", "", "-m", "x"}, ExitUsage, "slipway etcd disarm: the MEMBER is empty"},
		{"etcd disarm: bad output format", []string{"etcd", "disarm", "--all", "-o", "yaml", "-m", "x"}, ExitUsage, `--output "yaml" is not supported`},
		{"etcd disarm: no manifest", []string{"etcd", "disarm", "--all"}, ExitUsage, "pass -m/--manifest"},
		{"certificates renew: bad output format", []string{"certificates", "renew", "-o", "yaml", "-m", "x"}, ExitUsage, `--output "yaml" is not supported`},
		{"certificates renew: no manifest", []string{"certificates", "renew"}, ExitUsage, "pass -m/--manifest"},
		{"proxy: bad listen address", []string{"proxy", "--listen", "8080", "-m", "x"}, ExitUsage, `--listen "8080": want host:port`},
		{"proxy: every address", []string{"proxy", "--listen", ":8080", "-m", "x"}, ExitUsage, "--listen :8080 is not a loopback address: anyone who reaches it could tunnel to the cluster's API through your SSH connections; listen on 127.0.0.1, or pass --allow-remote if you mean it"},
		{"proxy: a private address", []string{"proxy", "--listen", "10.0.0.5:8080", "-m", "x"}, ExitUsage, "pass --allow-remote"},
		{"proxy: --allow-remote warns", []string{"proxy", "--listen", "0.0.0.0:8080", "--allow-remote", "-m", "x"}, ExitConfig, "Warning: --listen 0.0.0.0:8080 is not a loopback address"},
		{"proxy: bad output format", []string{"proxy", "-o", "yaml", "-m", "x"}, ExitUsage, `--output "yaml" is not supported`},
		{"proxy: an argument", []string{"proxy", "cp-1", "-m", "x"}, ExitUsage, `slipway proxy takes no arguments, got ["cp-1"]`},
		{"proxy: no manifest", []string{"proxy"}, ExitUsage, "pass -m/--manifest"},
		{"kubeconfig: bad proxy URL scheme", []string{"kubeconfig", "--proxy-url", "ftp://127.0.0.1:8080", "-m", "x"}, ExitUsage, "the scheme must be http, https or socks5"},
		{"kubeconfig: proxy URL without a host", []string{"kubeconfig", "--proxy-url", "127.0.0.1:8080", "-m", "x"}, ExitUsage, `--proxy-url "127.0.0.1:8080"`},
		{"apply: --pki-backup without --restore-from", []string{"apply", "--pki-backup", "p.tar.gz", "-m", "x"}, ExitUsage, "--pki-backup is read only with --restore-from"},
		{"apply: a missing snapshot, before any host is reached", []string{"apply", "--restore-from", "/nonexistent/etcd.db", "-m", write("k.yaml", head+strings.ReplaceAll(host, "%s", ""))}, ExitConfig, "snapshot /nonexistent/etcd.db is invalid: no such file"},
		{"apply: a corrupt snapshot", []string{"apply", "--restore-from", write("bad.db", strings.Repeat("x", 100)), "-m", write("l.yaml", head+strings.ReplaceAll(host, "%s", ""))}, ExitConfig, "bad.db is invalid: the etcd snapshot's SHA-256 does not match"},
		{"apply: a missing PKI backup", []string{"apply", "--restore-from", write("good.db", goodSnapshot), "--pki-backup", "/nonexistent/pki.tar.gz", "-m", write("m.yaml", head+strings.ReplaceAll(host, "%s", ""))}, ExitConfig, "PKI backup /nonexistent/pki.tar.gz is invalid: no such file"},
		{"apply: a PKI backup from /dev/zero", []string{"apply", "--restore-from", write("good2.db", goodSnapshot), "--pki-backup", "/dev/zero", "-m", write("n.yaml", head+strings.ReplaceAll(host, "%s", ""))}, ExitConfig, "PKI backup /dev/zero is invalid: not a regular file (a character device)"},
		{"apply: a PKI backup that climbs out", []string{"apply", "--restore-from", write("good3.db", goodSnapshot), "--pki-backup", write("climb.tar.gz", climbing), "-m", write("o.yaml", head+strings.ReplaceAll(host, "%s", ""))}, ExitConfig, `member "pki/../../etc/cron.d/x" is not a file of slipway's PKI backups`},
		{"backup without a directory", []string{"backup", "-m", "x"}, ExitUsage, "backup needs one argument, the directory to write into"},
		{"backup: two directories", []string{"backup", "-m", "x", "a", "b"}, ExitUsage, "backup needs one argument"},
		{"backup: bad output format", []string{"backup", "-m", "x", "dir", "-o", "yaml"}, ExitUsage, `--output "yaml" is not supported`},
	}
	codes := map[int]bool{}
	outputs := map[string]bool{} // the commands whose -o a case refuses
	for _, tt := range tests {
		codes[tt.code] = true
		if c, _, err := NewRootCommand(Streams{}).Find(tt.args); err == nil && tt.code == ExitUsage && slices.Contains(tt.args, "-o") &&
			(strings.Contains(tt.want, "is not supported") || strings.Contains(tt.want, "is not an output format")) {
			outputs[c.CommandPath()] = true
		}
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			if interrupted[tt.name] {
				c, cancel := context.WithCancel(ctx)
				cancel()
				ctx = c
			}
			out, stderr, code := runContext(t, ctx, "", tt.args...)
			if code != tt.code {
				t.Errorf("exit code %d, want %d; stderr:\n%s", code, tt.code, stderr)
			}
			if code != ExitOK && code != ExitUnhealthy && out != "" {
				t.Errorf("printed a result on a failure:\n%s", out)
			}
			if !strings.Contains(stderr, tt.want) {
				t.Errorf("stderr does not contain %q:\n%s", tt.want, stderr)
			}
			if strings.Contains(stderr, "goroutine ") || strings.Contains(stderr, "panic") {
				t.Errorf("stderr shows a stack trace:\n%s", stderr)
			}
		})
	}
	// Every documented exit code has a case, and so has every command's -o.
	for _, e := range exitCodes {
		if !codes[e.code] {
			t.Errorf("no case exits with %d (%s)", e.code, e.meaning)
		}
	}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		if f := c.LocalFlags().Lookup("output"); f != nil && !c.Hidden && !outputs[c.CommandPath()] {
			t.Errorf("no case gives %s an -o it does not support", c.CommandPath())
		}
	}
	walk(NewRootCommand(Streams{}))
}

// sshKey is a new ed25519 private key in OpenSSH's format.
func sshKey(t *testing.T) string {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(block))
}

// tempWriter returns a function that writes a file in a temporary directory and returns its
// path.
func tempWriter(t *testing.T) func(name, body string) string {
	dir := t.TempDir()
	return func(name, body string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
}

func TestCompletion(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "fish"} {
		out, _, code := run(t, "", "completion", shell)
		if code != 0 || !strings.Contains(out, "slipway") {
			t.Errorf("completion %s: code %d", shell, code)
		}
	}
}

// TestExitCodeTable: the root help prints one table of every exit code the CLI returns, and the
// README's "Exit codes" section documents the same codes, no more and no fewer.
func TestExitCodeTable(t *testing.T) {
	help, _, code := run(t, "", "--help")
	if code != ExitOK {
		t.Fatalf("--help: code %d", code)
	}
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(data), "\n### Exit codes\n")
	section, _, _ = strings.Cut(section, "\n## ")
	documented := map[string]bool{}
	for _, line := range strings.Split(section, "\n") {
		if cells := strings.Split(line, "|"); len(cells) > 2 {
			if c := strings.TrimSpace(cells[1]); c != "" && strings.Trim(c, "0123456789") == "" {
				documented[c] = true
			}
		}
	}
	for _, c := range []int{ExitOK, ExitFailure, ExitUsage, ExitConfig, ExitUnhealthy, ExitInterrupted} {
		s := strconv.Itoa(c)
		if !documented[s] {
			t.Errorf("the README's exit code table lacks %d", c)
		}
		delete(documented, s)
		if !regexp.MustCompile(`(?m)^ +` + s + `  \S`).MatchString(help) {
			t.Errorf("the root help's exit code table lacks %d:\n%s", c, help)
		}
	}
	for c := range documented {
		t.Errorf("the README documents exit code %s, which the CLI does not return", c)
	}
	if len(exitCodes) != 6 {
		t.Errorf("the help's table has %d rows, want the 6 codes", len(exitCodes))
	}
}

// TestConfigDumpOmitsEmpty: config dump, in JSON and YAML, leaves out what is empty (a section
// the manifest does not use, a host without taints) and keeps only the empty objects that are
// choices (cloudProvider.none: {}, a CNI or an addon selected by its key); the result still
// loads back to the same dump.
func TestConfigDumpOmitsEmpty(t *testing.T) {
	choices := map[string]bool{"none": true, "openstack": true, "flannel": true, "canal": true, "cilium": true, "external": true}
	var walk func(path string, v any) []string
	walk = func(path string, v any) []string {
		var bad []string
		switch v := v.(type) {
		case nil:
			bad = append(bad, path+": null")
		case map[string]any:
			key := path[strings.LastIndex(path, ".")+1:]
			if len(v) == 0 && !choices[key] {
				bad = append(bad, path+": {}")
			}
			for k, e := range v {
				bad = append(bad, walk(path+"."+k, e)...)
			}
		case []any:
			for i, e := range v {
				bad = append(bad, walk(fmt.Sprintf("%s[%d]", path, i), e)...)
			}
		}
		return bad
	}
	files, _ := filepath.Glob("../../examples/*.yaml")
	if len(files) < 3 {
		t.Fatalf("found %d examples", len(files))
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			args := []string{"config", "dump", "-m", f}
			if tf := strings.TrimSuffix(f, ".yaml") + "-tf-output.json"; fileExists(tf) {
				args = append(args, "-t", tf)
			}
			js, stderr, code := run(t, "", append(args, "-o", "json")...)
			if code != 0 {
				t.Fatalf("code %d: %s", code, stderr)
			}
			var tree map[string]any
			if err := json.Unmarshal([]byte(js), &tree); err != nil {
				t.Fatal(err)
			}
			for _, b := range walk("", tree) {
				t.Errorf("-o json prints an empty value %s", b)
			}
			yml, _, _ := run(t, "", args...)
			if regexp.MustCompile(`(?m)^\s*(staticWorkers|kubelet|proxy|encryption|etcd|taints): (\{\}|null)$`).MatchString(yml) {
				t.Errorf("the YAML dump prints an empty section:\n%s", yml)
			}
			// The JSON dump is a manifest that loads to the same cluster.
			again, stderr, code := run(t, "", "config", "dump", "-o", "json", "-m", writeTemp(t, "dump.json", js))
			if code != 0 || again != js {
				t.Errorf("the JSON dump does not load back to itself (code %d): %s", code, stderr)
			}
		})
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func writeTemp(t *testing.T, name, body string) string {
	t.Helper()
	return tempWriter(t)(name, body)
}

// TestHelpListsTheGlobalFlagsItReads: a command's help shows the global flags it reads and no
// others.
func TestHelpListsTheGlobalFlagsItReads(t *testing.T) {
	tests := []struct {
		args      []string
		want, not []string
	}{
		{[]string{"apply", "--help"}, []string{"--manifest", "--tfjson", "--verbose"}, nil},
		{[]string{"config", "dump", "--help"}, []string{"--manifest", "--tfjson"}, []string{"--verbose"}},
		{[]string{"config", "migrate", "--help"}, []string{"--tfjson"}, []string{"--manifest", "--verbose"}},
		{[]string{"version", "--help"}, nil, []string{"--manifest", "--tfjson", "--verbose"}},
		{[]string{"help", "config", "print"}, nil, []string{"--manifest", "--tfjson", "--verbose"}},
		{[]string{"--help"}, []string{"--manifest", "--tfjson", "--verbose", "--log-format"}, nil},
	}
	for _, tt := range tests {
		out, _, code := run(t, "", tt.args...)
		if code != 0 {
			t.Errorf("%q: code %d", tt.args, code)
		}
		for _, w := range tt.want {
			if !strings.Contains(out, w) {
				t.Errorf("%q does not list %s:\n%s", tt.args, w, out)
			}
		}
		for _, n := range tt.not {
			if strings.Contains(out, n) {
				t.Errorf("%q lists %s, which it does not read:\n%s", tt.args, n, out)
			}
		}
	}
	// The flags are hidden only while one help prints.
	if out, _, _ := run(t, "", "version", "--help"); strings.Contains(out, "--manifest") {
		t.Fatal("version's help lists --manifest")
	}
	if out, _, _ := run(t, "", "status", "--help"); !strings.Contains(out, "--manifest") {
		t.Errorf("status's help after version's does not list --manifest:\n%s", out)
	}
}

// TestLogFormatJSON: with --log-format json (or KubeOne's -l json) what a command says on
// stderr, warnings and the final error included, is JSON entries, one a line, while stdout
// keeps the result; a command that prints no progress refuses the flag.
func TestLogFormatJSON(t *testing.T) {
	write := tempWriter(t)
	even := write("even.yaml", "apiVersion: slipway.dev/v1beta1\nkind: Cluster\nname: x\nversions: {kubernetes: v1.36.3}\napiEndpoint: {host: lb}\n"+
		"controlPlane: {hosts: [{publicAddress: 10.0.0.1, sshPrivateKeyFile: id}, {publicAddress: 10.0.0.2, sshPrivateKeyFile: id}]}\n")
	entries := func(t *testing.T, stderr string) []map[string]any {
		t.Helper()
		var es []map[string]any
		for _, line := range strings.Split(strings.TrimSuffix(stderr, "\n"), "\n") {
			var e map[string]any
			if err := json.Unmarshal([]byte(line), &e); err != nil {
				t.Fatalf("stderr line is not JSON: %q", line)
			}
			if _, err := time.Parse(time.RFC3339Nano, fmt.Sprint(e["time"])); err != nil {
				t.Errorf("entry without a time: %q", line)
			}
			es = append(es, e)
		}
		return es
	}
	out, stderr, code := run(t, "", "config", "dump", "--log-format", "json", "-m", even)
	if code != 0 || !strings.HasPrefix(out, "apiVersion: slipway.dev/v1beta1\n") {
		t.Fatalf("code %d, stdout:\n%s\nstderr:\n%s", code, out, stderr)
	}
	es := entries(t, stderr)
	if len(es) != 1 || es[0]["level"] != "warning" || !strings.Contains(fmt.Sprint(es[0]["message"]), "2 hosts is an even number") {
		t.Errorf("want one warning entry about the even control plane, got %v", es)
	}

	_, stderr, code = run(t, "", "config", "dump", "-l", "json", "-m", "/nonexistent/cluster.yaml")
	es = entries(t, stderr)
	if code != ExitConfig || len(es) != 1 || es[0]["level"] != "error" || !strings.Contains(fmt.Sprint(es[0]["message"]), "/nonexistent/cluster.yaml is invalid") {
		t.Errorf("code %d, want %d and one error entry, got %v", code, ExitConfig, es)
	}

	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"config", "dump", "--log-format", "xml", "-m", even}, `--log-format "xml" is not supported; use text or json`},
		{[]string{"version", "--log-format", "json"}, "slipway version does not read --log-format (-l)"},
	} {
		out, stderr, code := run(t, "", tt.args...)
		if code != ExitUsage || out != "" || !strings.Contains(stderr, tt.want) {
			t.Errorf("%q: code %d, stdout %q, stderr does not say %q:\n%s", tt.args, code, out, tt.want, stderr)
		}
	}
}
