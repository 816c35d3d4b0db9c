package scripts

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
)

// Scheduled etcd snapshots (etcd.snapshots): where a control plane keeps them, the systemd units
// that take them, the script the service runs, and the record of what the etcd-snapshots step
// installed.
const (
	SnapshotDir    = "/var/lib/slipway/etcd-snapshots"
	SnapshotUnit   = "slipway-etcd-snapshot"
	SnapshotScript = "/etc/slipway/etcd-snapshot.sh"
	SnapshotRecord = "/etc/slipway/etcd-snapshots.sha256"
	// SnapshotS3Config is curl's configuration for the uploads (the access key), root-only;
	// SnapshotS3CA the CA bundle of etcd.snapshots.s3.caFile.
	SnapshotS3Config  = "/etc/slipway/etcd-snapshot-s3.curlrc"
	SnapshotS3CA      = "/etc/slipway/etcd-snapshot-s3-ca.crt"
	snapshotContainer = "slipway-etcd-snapshot"
)

// SnapshotParams are one control plane's scheduled snapshots.
type SnapshotParams struct {
	// Node names the snapshot files (<node>-<UTC time>.db).
	Node string
	// Image is the cluster's etcd image, whose etcdctl takes the snapshot.
	Image string
	// Snapshots are the manifest's etcd.snapshots, defaulted.
	Snapshots v1beta1.EtcdSnapshots
	// S3 is what the uploads to Snapshots.S3 need beyond the manifest, when it is set.
	S3 *S3Credentials
}

// S3Credentials are an S3 access key and the CA bundle of etcd.snapshots.s3.caFile. They reach
// the control planes only, in root-only files, and are never printed.
type S3Credentials struct {
	AccessKeyID, SecretAccessKey string
	// CA is PEM, or nil to trust the host's CAs.
	CA []byte
}

// s3KeyRE is what an access key ID or secret may hold: AWS's are letters, digits, '/' and '+';
// other stores add '=', '.', '_' and '-'. Anything else (a quote, a newline) could change curl's
// configuration file they are written to, so it is refused.
var s3KeyRE = regexp.MustCompile(`^[A-Za-z0-9/+=._-]{3,128}$`)

// s3Upload is what the snapshot script's upload needs: the bucket's URL (path-style), the
// key prefix ("" or ending in '/'), curl's --aws-sigv4 argument, and the protocols curl may use
// (--proto): https only, unless the manifest set insecure.
type s3Upload struct {
	BucketURL, Prefix, Sigv4, Config, Proto string
}

// newS3Upload checks s and creds and returns the upload's template data, and the credentials
// file's content for curl --config.
func newS3Upload(s *v1beta1.SnapshotS3, creds *S3Credentials) (*s3Upload, string, error) {
	if creds == nil {
		return nil, "", fmt.Errorf("etcd.snapshots.s3 is set: %s", S3CredentialsHelp)
	}
	if err := creds.Check(); err != nil {
		return nil, "", err
	}
	u, err := url.Parse(s.Endpoint)
	if err != nil || u.Host == "" || (u.Scheme != "https" && !(u.Scheme == "http" && s.Insecure)) {
		return nil, "", fmt.Errorf("etcd.snapshots.s3.endpoint %q must be an https URL (or http with insecure: true)", v1beta1.RedactURL(s.Endpoint))
	}
	proto := "=https"
	if s.Insecure {
		proto = "=http,https"
	}
	prefix := strings.TrimSuffix(s.Folder, "/")
	if prefix != "" {
		prefix += "/"
	}
	up := &s3Upload{BucketURL: strings.TrimSuffix(s.Endpoint, "/") + "/" + s.Bucket, Prefix: prefix,
		Sigv4: "aws:amz:" + s.Region + ":s3", Config: SnapshotS3Config, Proto: proto}
	conf := fmt.Sprintf("# slipway: the S3 access key for the etcd snapshot uploads\nuser = \"%s:%s\"\n", creds.AccessKeyID, creds.SecretAccessKey)
	if creds.CA != nil {
		conf += fmt.Sprintf("cacert = \"%s\"\n", SnapshotS3CA)
	}
	return up, conf, nil
}

// Check refuses an access key that the rendered curl configuration could not carry as it is:
// each part 3 to 128 letters, digits, '/', '+', '=', '.', '_' or '-' (so no quote, space or line
// break). apply calls it when it reads the key, before any host is reached.
func (c *S3Credentials) Check() error {
	for _, kv := range [][2]string{{"AWS_ACCESS_KEY_ID", c.AccessKeyID}, {"AWS_SECRET_ACCESS_KEY", c.SecretAccessKey}} {
		if !s3KeyRE.MatchString(kv[1]) {
			// The value is a secret: the error describes it without repeating it.
			return fmt.Errorf("%s (%d characters) must be 3 to 128 letters, digits, '/', '+', '=', '.', '_' or '-'", kv[0], len(kv[1]))
		}
	}
	return nil
}

// S3CredentialsHelp says where the S3 access key comes from.
const S3CredentialsHelp = "set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY in slipway's environment: the access key the control planes upload snapshots with"

// EtcdSnapshots returns the script that installs the timer of p's scheduled snapshots on a
// control plane, or with p nil the one that removes it. Either keeps the snapshots taken.
func EtcdSnapshots(p *SnapshotParams) (string, error) {
	d := struct {
		Remove                                             bool
		Unit, Script, Dir, OnCalendar, Schedule, RunScript string
		Retain                                             int
		S3Config, S3CAPath, S3CA, S3Conf                   string
	}{Remove: p == nil, Unit: SnapshotUnit, Script: SnapshotScript, Dir: SnapshotDir, S3Config: SnapshotS3Config, S3CAPath: SnapshotS3CA}
	if p == nil {
		return render("etcd-snapshots", "stop the scheduled etcd snapshots", anyFamily, d)
	}
	cal, err := v1beta1.OnCalendar(p.Snapshots.Schedule)
	if err != nil {
		return "", fmt.Errorf("etcd.snapshots.schedule %q: %w", p.Snapshots.Schedule, err)
	}
	if p.Snapshots.Retain < 1 {
		return "", fmt.Errorf("etcd.snapshots.retain %d: keep at least one", p.Snapshots.Retain)
	}
	// The schedule goes into comments and unit files as it is: only what cron expressions use.
	if strings.Trim(p.Snapshots.Schedule, "0123456789*/,- @abcdefghijklmnopqrstuvwxyz") != "" {
		return "", fmt.Errorf("etcd.snapshots.schedule %q: unexpected characters", p.Snapshots.Schedule)
	}
	var upload *s3Upload
	if s := p.Snapshots.S3; s != nil {
		u, conf, err := newS3Upload(s, p.S3)
		if err != nil {
			return "", err
		}
		upload, d.S3Conf = u, conf
		if p.S3.CA != nil {
			d.S3CA = strings.TrimRight(string(p.S3.CA), "\n") + "\n"
		}
	}
	run, err := render("etcd-snapshot", "take one etcd snapshot and keep the newest", anyFamily, struct {
		Dir, Node, Image, Container string
		Retain                      int
		S3                          *s3Upload
	}{SnapshotDir, p.Node, p.Image, snapshotContainer, p.Snapshots.Retain, upload})
	if err != nil {
		return "", err
	}
	d.OnCalendar, d.Schedule, d.RunScript, d.Retain = cal, strings.TrimSpace(p.Snapshots.Schedule), strings.TrimRight(run, "\n"), p.Snapshots.Retain
	return render("etcd-snapshots", "schedule etcd snapshots", anyFamily, d)
}
