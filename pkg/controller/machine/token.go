package machine

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/bootstrap"
	"github.com/slipway-dev/slipway/pkg/cloud"
)

const (
	tokenNamespace = metav1.NamespaceSystem
	// tokenMachineLabel ties a bootstrap token Secret to its Machine's UID.
	tokenMachineLabel = "cluster.k8s.io/machine-uid"
	// tokenSlack is how much longer than the join timeout a token lives, so that a Machine
	// that joins at the last moment still finds a valid token.
	tokenSlack = 10 * time.Minute
)

// TokenGroups are the groups of a Machine's bootstrap token: kubeadm's for joining nodes (CSR,
// kubeadm-config), and the one that may read the node credentials that the Machine's user-data
// leaves out and the machine fetches with the token (bootstrap.CredentialsSecret).
const TokenGroups = "system:bootstrappers:kubeadm:default-node-token," + bootstrap.CredentialsGroup

// tokenAttempts is how many token IDs a Machine tries. IDs are six characters of [a-z0-9]
// (kubeadm's format), so two Machines can collide; the next candidate resolves that. A name
// taken by this Machine's own token from before a restart is passed over the same way.
const tokenAttempts = 16

// tokenAnnotation records on a Machine the bootstrap token Secrets made for it, by name and
// UID, so that a controller that restarted deletes them without reading Secrets: it may
// create and delete Secrets in kube-system, but read only its own by name. Like every
// "*.slipway.dev/state" annotation it is admitted only from the controller, so nobody else can
// point a deletion at another Secret; the UID precondition would refuse it anyway.
const tokenAnnotation = "token" + cloud.StateAnnotationSuffix

// tokenRecord is one bootstrap token Secret of a Machine.
type tokenRecord struct {
	Name string    `json:"name"`
	UID  types.UID `json:"uid"`
}

// recordedTokens are the token Secrets the Machine's annotation records.
func recordedTokens(m *v1alpha1.Machine) []tokenRecord {
	var recs []tokenRecord
	if raw := m.Annotations[tokenAnnotation]; raw != "" && json.Unmarshal([]byte(raw), &recs) != nil {
		return nil
	}
	return recs
}

// tokenID derives the i-th candidate token ID from the Machine UID, so that two reconciles of
// one Machine try the same names in the same order.
func tokenID(m *v1alpha1.Machine, i int) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s/%d", m.UID, i)))
	id := make([]byte, 6)
	for j := range id {
		// Two bytes per character keep the modulo bias below 0.1%.
		id[j] = alphabet[(int(sum[2*j])<<8|int(sum[2*j+1]))%len(alphabet)]
	}
	return string(id)
}

// ensureToken returns the Machine's bootstrap token: the one this process made for it (a
// retried server create reuses it), or a new Secret, recorded on the Machine before it is used.
// The TTL is the join timeout plus slack: a Machine that has not joined by then is replaced
// anyway. A name already taken is never read: it is another Machine's, or this Machine's own
// from before a restart, which is recorded and deleted with the others once the Node joins.
func (r *Reconciler) ensureToken(ctx context.Context, m *v1alpha1.Machine) (string, error) {
	if v, ok := r.tokens.Load(m.UID); ok && v.(tokenRef).token != "" {
		return v.(tokenRef).token, nil
	}
	secret, err := bootstrap.NewTokenSecret()
	if err != nil {
		return "", err
	}
	exp := time.Now().Add(r.opts.JoinTimeout + tokenSlack).UTC().Format(time.RFC3339)
	for i := range tokenAttempts {
		id := tokenID(m, i)
		name := "bootstrap-token-" + id
		sec := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: tokenNamespace,
				Labels: map[string]string{tokenMachineLabel: string(m.UID)}},
			Type: corev1.SecretTypeBootstrapToken,
			StringData: map[string]string{
				"token-id":                       id,
				"token-secret":                   secret,
				"expiration":                     exp,
				"usage-bootstrap-authentication": "true",
				"usage-bootstrap-signing":        "true",
				"auth-extra-groups":              TokenGroups,
				"description":                    fmt.Sprintf("machine-controller: join token of Machine %s/%s", m.Namespace, m.Name),
			},
		}
		err = r.client.Create(ctx, sec)
		if apierrors.IsAlreadyExists(err) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("creating bootstrap token %s: %w", name, err)
		}
		if err := r.recordToken(ctx, m, tokenRecord{Name: name, UID: sec.UID}); err != nil {
			// Unrecorded, nothing would delete it before it expires: delete it now.
			_ = r.client.Delete(ctx, sec, client.Preconditions{UID: &sec.UID})
			return "", err
		}
		token := id + "." + secret
		r.tokens.Store(m.UID, tokenRef{name: name, uid: sec.UID, token: token})
		return token, nil
	}
	return "", fmt.Errorf("all %d bootstrap token IDs of machine %s/%s are taken", tokenAttempts, m.Namespace, m.Name)
}

// recordToken adds rec to the Machine's tokenAnnotation.
func (r *Reconciler) recordToken(ctx context.Context, m *v1alpha1.Machine, rec tokenRecord) error {
	raw, err := json.Marshal(append(recordedTokens(m), rec))
	if err != nil {
		return fmt.Errorf("encoding the bootstrap tokens of machine %s/%s: %w", m.Namespace, m.Name, err)
	}
	cp := m.DeepCopy()
	if cp.Annotations == nil {
		cp.Annotations = map[string]string{}
	}
	cp.Annotations[tokenAnnotation] = string(raw)
	if err := r.client.Patch(ctx, cp, client.MergeFrom(m)); err != nil {
		return fmt.Errorf("recording bootstrap token %s on machine %s/%s: %w", rec.Name, m.Namespace, m.Name, err)
	}
	m.Annotations, m.ResourceVersion = cp.Annotations, cp.ResourceVersion
	return nil
}

// tokenRef is the bootstrap token this process made for a Machine; the zero value means the
// Machine has no token outstanding (they were deleted).
type tokenRef struct {
	name  string
	uid   types.UID
	token string
}

// deleteToken removes the Machine's bootstrap tokens once the Node joined or the Machine goes:
// the one this process made and those the Machine records, each by name with its UID as a
// precondition, without a read. A token whose Secret is gone, or whose name another Secret holds
// now, is gone already. Tokens of Machines made before they were recorded are left to their
// expiration (join timeout plus slack), which kube-controller-manager's token cleaner enforces.
func (r *Reconciler) deleteToken(ctx context.Context, m *v1alpha1.Machine) error {
	v, known := r.tokens.Load(m.UID)
	if known && v.(tokenRef).name == "" {
		return nil
	}
	recs := recordedTokens(m)
	if known {
		if ref := v.(tokenRef); !slices.Contains(recs, tokenRecord{Name: ref.name, UID: ref.uid}) {
			recs = append(recs, tokenRecord{Name: ref.name, UID: ref.uid})
		}
	}
	var errs []error
	for _, rec := range recs {
		sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: tokenNamespace, Name: rec.Name}}
		err := r.client.Delete(ctx, sec, client.Preconditions{UID: &rec.UID})
		// Conflict: another Secret holds the name now, so the Machine's own is gone already.
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("deleting bootstrap tokens of machine %s/%s: %w", m.Namespace, m.Name, err)
	}
	r.tokens.Store(m.UID, tokenRef{})
	return nil
}

// userdata renders the cloud-init for m.
func (r *Reconciler) userdata(ctx context.Context, m *v1alpha1.Machine) (string, error) {
	pc, err := v1alpha1.DecodeProviderConfig(m.Spec.ProviderSpec)
	if err != nil {
		return "", err
	}
	var osSpec struct {
		DistUpgradeOnBoot bool `json:"distUpgradeOnBoot"`
	}
	if len(pc.OperatingSystemSpec) > 0 {
		if err := json.Unmarshal(pc.OperatingSystemSpec, &osSpec); err != nil {
			return "", fmt.Errorf("decoding operatingSystemSpec: %w", err)
		}
	}
	join, err := r.joinInfo.get(ctx)
	if err != nil {
		return "", err
	}
	token, err := r.ensureToken(ctx, m)
	if err != nil {
		return "", err
	}
	settings, err := r.nodeSettings(ctx)
	if err != nil {
		return "", err
	}
	ud, err := bootstrap.Render(bootstrap.Config{
		OperatingSystem:   pc.OperatingSystem,
		KubeletVersion:    m.Spec.Versions.Kubelet,
		APIServerEndpoint: join.Endpoint,
		CACertHash:        join.CACertHash,
		Token:             token,
		SSHPublicKeys:     pc.SSHPublicKeys,
		Taints:            []bootstrap.Taint{{Key: v1alpha1.NotReadyTaintKey, Effect: string(corev1.TaintEffectNoSchedule)}},
		DistUpgradeOnBoot: osSpec.DistUpgradeOnBoot,
		Settings:          settings,
	})
	if err != nil {
		return "", fmt.Errorf("rendering user-data of machine %s/%s: %w", m.Namespace, m.Name, err)
	}
	return ud, nil
}

// nodeSettings reads the cluster-wide settings of new nodes that apply writes, for a user-data
// (once per new Machine). It always reads them: a Machine created right after an apply must get
// what that apply wrote. What it read is kept for recentNodeSettings.
func (r *Reconciler) nodeSettings(ctx context.Context) (bootstrap.Settings, error) {
	sec := &corev1.Secret{}
	key := client.ObjectKey{Namespace: bootstrap.SettingsNamespace, Name: bootstrap.SettingsSecret}
	if err := r.reader.Get(ctx, key, sec); err != nil {
		if apierrors.IsNotFound(err) {
			return bootstrap.Settings{}, fmt.Errorf("the node settings %s are missing: slipway apply writes them with the machine-controller", key)
		}
		return bootstrap.Settings{}, fmt.Errorf("reading the node settings %s: %w", key, err)
	}
	s, err := bootstrap.ParseSettings(sec.Data[bootstrap.SettingsKey])
	if err != nil {
		return bootstrap.Settings{}, err
	}
	r.settings.keep(s)
	return s, nil
}

// settingsMaxAge is how old the node settings that a joined Node's checks use may be.
const settingsMaxAge = time.Minute

// recentNodeSettings returns the node settings as read within settingsMaxAge, reading them only
// when older. The Node steps (which CNI pods to wait for) tolerate that much delay, and during a
// scale-up every new Machine's user-data has just read them: a read per Machine saved.
func (r *Reconciler) recentNodeSettings(ctx context.Context) (bootstrap.Settings, error) {
	if s, ok := r.settings.recent(settingsMaxAge); ok {
		return s, nil
	}
	return r.nodeSettings(ctx)
}

// settingsMemo is the node settings last read, and when.
type settingsMemo struct {
	mu sync.Mutex
	s  bootstrap.Settings
	at time.Time
}

func (m *settingsMemo) keep(s bootstrap.Settings) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.s, m.at = s, time.Now()
}

func (m *settingsMemo) recent(maxAge time.Duration) (bootstrap.Settings, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.s, !m.at.IsZero() && time.Since(m.at) < maxAge
}

// joinInfoCache answers where Machines join: the flags if given, else kubeadm's cluster-info
// ConfigMap in kube-public, re-read at most once a minute.
type joinInfoCache struct {
	reader client.Reader
	static bootstrap.ClusterInfo

	mu      sync.Mutex
	cached  bootstrap.ClusterInfo
	fetched time.Time
}

func (j *joinInfoCache) get(ctx context.Context) (bootstrap.ClusterInfo, error) {
	if j.static.Endpoint != "" && j.static.CACertHash != "" {
		return j.static, nil
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if time.Since(j.fetched) < time.Minute {
		return j.merge(j.cached), nil
	}
	cm := &corev1.ConfigMap{}
	if err := j.reader.Get(ctx, client.ObjectKey{Namespace: metav1.NamespacePublic, Name: "cluster-info"}, cm); err != nil {
		return bootstrap.ClusterInfo{}, fmt.Errorf("reading kube-public/cluster-info for the join endpoint and CA hash "+
			"(or set --join-api-endpoint and --join-ca-cert-hash): %w", err)
	}
	info, err := bootstrap.ParseClusterInfo(cm.Data["kubeconfig"])
	if err != nil {
		return bootstrap.ClusterInfo{}, fmt.Errorf("kube-public/cluster-info: %w", err)
	}
	j.cached, j.fetched = info, time.Now()
	return j.merge(info), nil
}

// merge lets a flag override one half of what cluster-info says.
func (j *joinInfoCache) merge(info bootstrap.ClusterInfo) bootstrap.ClusterInfo {
	if j.static.Endpoint != "" {
		info.Endpoint = j.static.Endpoint
	}
	if j.static.CACertHash != "" {
		info.CACertHash = j.static.CACertHash
	}
	return info
}
