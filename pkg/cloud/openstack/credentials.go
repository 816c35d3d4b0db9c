package openstack

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/gophercloud/gophercloud/v2"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// credentials is everything needed to get a Keystone token and pick endpoints.
type credentials struct {
	AuthURL     string
	Region      string
	Username    string
	Password    string
	DomainName  string
	ProjectName string
	ProjectID   string
	TokenID     string
	AppCredID   string
	AppSecret   string
}

// env lists, per credential field, the OS_* variables it falls back to, in order.
var env = struct {
	authURL, region, username, password, domain, projectName, projectID, appID, appSecret []string
}{
	authURL:     []string{"OS_AUTH_URL"},
	region:      []string{"OS_REGION_NAME"},
	username:    []string{"OS_USERNAME"},
	password:    []string{"OS_PASSWORD"},
	domain:      []string{"OS_DOMAIN_NAME", "OS_USER_DOMAIN_NAME"},
	projectName: []string{"OS_PROJECT_NAME", "OS_TENANT_NAME"},
	projectID:   []string{"OS_PROJECT_ID", "OS_TENANT_ID"},
	appID:       []string{"OS_APPLICATION_CREDENTIAL_ID"},
	appSecret:   []string{"OS_APPLICATION_CREDENTIAL_SECRET"},
}

// credentialsOf returns the credentials for a spec. By default the cloud and the identity are
// the controller's own (its OS_* variables) and a spec that names any of them is refused (one
// that names the controller's own identity endpoint names nothing, and is treated as without). With
// pol.allowMachineCloud a spec may name them: a spec that names its own identityEndpoint brings
// its whole identity, and nothing falls back to the environment, so that the controller's
// credentials never go to an endpoint a Machine chose; a spec without one may pick another
// project, region or user at the controller's own Keystone. The credential kind (password,
// application credential or token) is chosen by the spec when it names one, otherwise by the
// environment; mixing kinds is an error in either place.
func credentialsOf(s *Spec, lookup func(string) (string, bool), pol Policy, path *field.Path) (credentials, field.ErrorList) {
	if errs := pol.checkCloudFields(s, path); len(errs) > 0 {
		return credentials{}, errs
	}
	if s.IdentityEndpoint != "" && sameEndpoint(s.IdentityEndpoint, pol.AuthURL) {
		// The controller's own Keystone, as the spec writes it: that names nothing new.
		own := *s
		own.IdentityEndpoint = ""
		s = &own
	}
	if s.IdentityEndpoint != "" {
		lookup = func(string) (string, bool) { return "", false }
	}
	fromEnv := func(cur string, names []string) string {
		if cur != "" {
			return cur
		}
		for _, n := range names {
			if v, ok := lookup(n); ok && v != "" {
				return v
			}
		}
		return ""
	}
	c := credentials{
		AuthURL: fromEnv(s.IdentityEndpoint, env.authURL), Region: fromEnv(s.Region, env.region),
		DomainName: fromEnv(s.DomainName, env.domain), TokenID: s.TokenID,
	}
	var errs field.ErrorList
	specPassword := s.Username != "" || s.Password != ""
	specApp := s.ApplicationCredentialID != "" || s.ApplicationCredentialSecret != ""
	if n := count(specPassword, specApp, s.TokenID != ""); n > 1 {
		return c, append(errs, field.Invalid(path, "<credentials>",
			"give either username and password, or applicationCredentialID and applicationCredentialSecret, or tokenId; not several"))
	}
	usePassword, useApp := specPassword, specApp
	if !specPassword && !specApp && s.TokenID == "" {
		envPassword := fromEnv("", env.username) != ""
		envApp := fromEnv("", env.appID) != ""
		if envPassword && envApp {
			return c, append(errs, field.Invalid(path, "<credentials>",
				"the environment sets both OS_USERNAME and OS_APPLICATION_CREDENTIAL_ID; set only one kind of credential"))
		}
		usePassword, useApp = envPassword, envApp
	}
	switch {
	case useApp:
		c.AppCredID, c.AppSecret = fromEnv(s.ApplicationCredentialID, env.appID), fromEnv(s.ApplicationCredentialSecret, env.appSecret)
		if c.AppCredID == "" {
			errs = append(errs, field.Required(path.Child("applicationCredentialID"), "or OS_APPLICATION_CREDENTIAL_ID"))
		}
		if c.AppSecret == "" {
			errs = append(errs, field.Required(path.Child("applicationCredentialSecret"), "or OS_APPLICATION_CREDENTIAL_SECRET"))
		}
	case usePassword:
		c.Username, c.Password = fromEnv(s.Username, env.username), fromEnv(s.Password, env.password)
		c.ProjectName, c.ProjectID = fromEnv(s.ProjectName, env.projectName), fromEnv(s.ProjectID, env.projectID)
		for _, req := range []struct{ v, name, env string }{
			{c.Username, "username", "OS_USERNAME"}, {c.Password, "password", "OS_PASSWORD"},
			{c.DomainName, "domainName", "OS_DOMAIN_NAME"},
		} {
			if req.v == "" {
				errs = append(errs, field.Required(path.Child(req.name), "or "+req.env))
			}
		}
		if c.ProjectName == "" && c.ProjectID == "" {
			errs = append(errs, field.Required(path.Child("projectName"), "projectName or projectID (or OS_PROJECT_NAME/OS_PROJECT_ID)"))
		}
	case s.TokenID != "":
		c.ProjectName, c.ProjectID = fromEnv(s.ProjectName, env.projectName), fromEnv(s.ProjectID, env.projectID)
	default:
		errs = append(errs, field.Required(path.Child("username"),
			"credentials: username and password, or applicationCredentialID and applicationCredentialSecret (or OS_* variables)"))
	}
	switch {
	case c.AuthURL == "":
		errs = append(errs, field.Required(path.Child("identityEndpoint"), "or OS_AUTH_URL"))
	case s.IdentityEndpoint != "":
		errs = append(errs, pol.checkURL(path.Child("identityEndpoint"), c.AuthURL)...)
	default:
		errs = append(errs, pol.checkURL(field.NewPath("OS_AUTH_URL"), c.AuthURL)...)
	}
	return c, errs
}

func count(bs ...bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}

// authOptions are gophercloud's options for these credentials. Tokens cannot be renewed, so
// only password and application-credential sessions re-authenticate.
func (c credentials) authOptions() gophercloud.AuthOptions {
	o := gophercloud.AuthOptions{IdentityEndpoint: c.AuthURL, AllowReauth: c.TokenID == ""}
	switch {
	case c.AppCredID != "":
		o.ApplicationCredentialID, o.ApplicationCredentialSecret = c.AppCredID, c.AppSecret
	case c.TokenID != "":
		o.TokenID, o.TenantID, o.TenantName, o.DomainName = c.TokenID, c.ProjectID, c.ProjectName, c.DomainName
		if c.ProjectID != "" || c.ProjectName != "" {
			o.Scope = &gophercloud.AuthScope{ProjectID: c.ProjectID, ProjectName: c.ProjectName, DomainName: c.DomainName}
		}
	default:
		o.Username, o.Password, o.DomainName = c.Username, c.Password, c.DomainName
		o.TenantID, o.TenantName = c.ProjectID, c.ProjectName
	}
	return o
}

// key identifies the credential set without holding the secrets themselves.
func (c credentials) key() string {
	h := sha256.New()
	for _, v := range []string{c.AuthURL, c.Region, c.Username, c.Password, c.DomainName, c.ProjectName,
		c.ProjectID, c.TokenID, c.AppCredID, c.AppSecret} {
		fmt.Fprintf(h, "%d:%s;", len(v), v)
	}
	return hex.EncodeToString(h.Sum(nil))
}
