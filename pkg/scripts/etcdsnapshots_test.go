package scripts_test

import (
	"strings"
	"testing"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/scripts"
)

func TestEtcdSnapshotsGolden(t *testing.T) {
	s, err := scripts.EtcdSnapshots(&scripts.SnapshotParams{Node: "cp-1", Image: "registry.k8s.io/etcd:3.6.6-0",
		Snapshots: v1beta1.EtcdSnapshots{Schedule: "0 */6 * * 1-5", Retain: 7}})
	if err != nil {
		t.Fatal(err)
	}
	checkScript(t, "etcd-snapshots", s)
	for _, want := range []string{"OnCalendar=Mon,Tue,Wed,Thu,Fri *-*-* 00,06,12,18:00:00 UTC", "head -n -7", "'registry.k8s.io/etcd:3.6.6-0'", "node='cp-1'"} {
		if !strings.Contains(s, want) {
			t.Errorf("the set-up lacks %q", want)
		}
	}
	off, err := scripts.EtcdSnapshots(nil)
	if err != nil {
		t.Fatal(err)
	}
	checkScript(t, "etcd-snapshots-off", off)
	if strings.Contains(off, scripts.SnapshotDir+"'") || strings.Contains(off, "remove_path '"+scripts.SnapshotDir) {
		t.Error("stopping the snapshots removes the snapshots taken")
	}
}

func TestEtcdSnapshotsRefusesBadValues(t *testing.T) {
	for name, p := range map[string]scripts.SnapshotParams{
		"a schedule cron cannot read": {Node: "cp-1", Image: "etcd:1", Snapshots: v1beta1.EtcdSnapshots{Schedule: "every day", Retain: 1}},
		"nothing kept":                {Node: "cp-1", Image: "etcd:1", Snapshots: v1beta1.EtcdSnapshots{Schedule: "@daily", Retain: 0}},
		"a line break in the node":    {Node: "cp-1\nrm -rf /", Image: "etcd:1", Snapshots: v1beta1.EtcdSnapshots{Schedule: "@daily", Retain: 1}},
	} {
		if s, err := scripts.EtcdSnapshots(&p); err == nil {
			t.Errorf("%s: rendered\n%s", name, s)
		}
	}
}

func TestEtcdSnapshotsS3Golden(t *testing.T) {
	s3 := &v1beta1.SnapshotS3{Endpoint: "https://s3.example.com", Bucket: "backups", Folder: "prod/etcd", Region: "eu-central-1"}
	ca := []byte("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n")
	s, err := scripts.EtcdSnapshots(&scripts.SnapshotParams{Node: "cp-1", Image: "registry.k8s.io/etcd:3.6.6-0",
		Snapshots: v1beta1.EtcdSnapshots{Schedule: "0 */6 * * *", Retain: 7, S3: s3},
		S3:        &scripts.S3Credentials{AccessKeyID: "AKIAEXAMPLE", SecretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", CA: ca}})
	if err != nil {
		t.Fatal(err)
	}
	checkScript(t, "etcd-snapshots-s3", s)
	for _, want := range []string{
		"put_file '/etc/slipway/etcd-snapshot-s3.curlrc' 0600 <<'SLIPWAY_S3_CONFIG'\n# slipway: the S3 access key for the etcd snapshot uploads\nuser = \"AKIAEXAMPLE:wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY\"\ncacert = \"/etc/slipway/etcd-snapshot-s3-ca.crt\"\nSLIPWAY_S3_CONFIG\n",
		"put_file '/etc/slipway/etcd-snapshot-s3-ca.crt' 0644 <<'SLIPWAY_S3_CA'\n" + string(ca) + "SLIPWAY_S3_CA\n",
		"bucket='https://s3.example.com/backups'", "prefix='prod/etcd/'", "--aws-sigv4 'aws:amz:eu-central-1:s3'",
		"curl -fsS --globoff --proto '=https' ",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("the set-up lacks %q", want)
		}
	}
	// The secret is in the curl configuration only, never on a command line.
	if n := strings.Count(s, "wJalrXUtnFEMI"); n != 1 {
		t.Errorf("the secret appears %d times in the set-up; want once, in the curl configuration", n)
	}
	// Without S3, the files of an earlier set-up with S3 go.
	plain, err := scripts.EtcdSnapshots(&scripts.SnapshotParams{Node: "cp-1", Image: "etcd:1", Snapshots: v1beta1.EtcdSnapshots{Schedule: "@daily", Retain: 1}})
	if err != nil {
		t.Fatal(err)
	}
	off, err := scripts.EtcdSnapshots(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{plain, off} {
		for _, f := range []string{scripts.SnapshotS3Config, scripts.SnapshotS3CA} {
			if !strings.Contains(s, "remove_path '"+f+"'") {
				t.Errorf("a set-up without S3 keeps %s", f)
			}
		}
		if strings.Contains(s, "--aws-sigv4") {
			t.Error("a set-up without S3 uploads")
		}
	}
}

func TestEtcdSnapshotsS3RefusesBadCredentials(t *testing.T) {
	s3 := &v1beta1.SnapshotS3{Endpoint: "https://s3.example.com", Bucket: "backups", Region: "us-east-1"}
	for name, tc := range map[string]struct {
		creds *scripts.S3Credentials
		want  string
	}{
		"none":                       {nil, "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"},
		"a quote in the secret":      {&scripts.S3Credentials{AccessKeyID: "AKIA", SecretAccessKey: `abc"def`}, "AWS_SECRET_ACCESS_KEY (7 characters)"},
		"a line break in the key ID": {&scripts.S3Credentials{AccessKeyID: "AK\nIA", SecretAccessKey: "secret"}, "AWS_ACCESS_KEY_ID (5 characters)"},
	} {
		p := scripts.SnapshotParams{Node: "cp-1", Image: "etcd:1", Snapshots: v1beta1.EtcdSnapshots{Schedule: "@daily", Retain: 1, S3: s3}, S3: tc.creds}
		s, err := scripts.EtcdSnapshots(&p)
		if err == nil {
			t.Errorf("%s: rendered\n%s", name, s)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want it to name %q", name, err, tc.want)
		}
		if tc.creds != nil && (strings.Contains(err.Error(), tc.creds.SecretAccessKey) || strings.Contains(err.Error(), tc.creds.AccessKeyID)) {
			t.Errorf("%s: the error repeats a credential: %v", name, err)
		}
	}
}

// TestEtcdSnapshotsS3Endpoint: an http:// endpoint is rendered only with insecure, and curl is
// then allowed plain http; otherwise only https.
func TestEtcdSnapshotsS3Endpoint(t *testing.T) {
	creds := &scripts.S3Credentials{AccessKeyID: "AKIAEXAMPLE", SecretAccessKey: "secretsecret"}
	render := func(s3 *v1beta1.SnapshotS3) (string, error) {
		return scripts.EtcdSnapshots(&scripts.SnapshotParams{Node: "cp-1", Image: "etcd:1",
			Snapshots: v1beta1.EtcdSnapshots{Schedule: "@daily", Retain: 1, S3: s3}, S3: creds})
	}
	for _, endpoint := range []string{"http://10.0.0.5:9000", "HTTP://10.0.0.5:9000", "ftp://10.0.0.5", "10.0.0.5:9000"} {
		s, err := render(&v1beta1.SnapshotS3{Endpoint: endpoint, Bucket: "backups", Region: "us-east-1"})
		if err == nil || !strings.Contains(err.Error(), "etcd.snapshots.s3.endpoint") {
			t.Errorf("%s without insecure: %v; want an error naming etcd.snapshots.s3.endpoint\n%s", endpoint, err, s)
		}
	}
	s, err := render(&v1beta1.SnapshotS3{Endpoint: "http://10.0.0.5:9000", Bucket: "backups", Region: "us-east-1", Insecure: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(s, "--proto '=http,https'") || !strings.Contains(s, "bucket='http://10.0.0.5:9000/backups'") {
		t.Errorf("with insecure, the script does not allow http:\n%s", s)
	}
}
