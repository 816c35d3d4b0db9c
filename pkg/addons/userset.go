package addons

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"text/template"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"sigs.k8s.io/yaml"
)

// The label and annotations that slipway puts on every object of the user addon set
// (addons.path). The label names the set, the cluster's name: the probe lists the objects that
// carry it, and apply prunes those that the folder no longer holds. The annotations record the
// file an object came from and the hash of what was applied, which the plan compares.
const (
	SetLabel         = "addons.slipway.dev/set"
	SourceAnnotation = "addons.slipway.dev/source"
	HashAnnotation   = "addons.slipway.dev/hash"
)

// File is one manifest of addons.path: its name relative to the folder ("/"-separated), and
// what it holds.
type File struct {
	Name string
	Data []byte
}

// Object is one object of the user addon set as apply sends it: with the set's label and the
// source and hash annotations. File, Doc and Line say where it came from: the file, the
// document's number in it (from 1) and the line the document starts on, in the rendered file
// (the source's own lines, unless a template action adds or removes lines).
type Object struct {
	Obj  *unstructured.Unstructured
	File string
	Doc  int
	Line int
	// Hash is the hash of the object as applied, without the hash annotation itself.
	Hash string
}

// String names the object and where it came from, for errors.
func (o Object) String() string {
	return fmt.Sprintf("%s:%d (document %d, %s %s)", o.File, o.Line, o.Doc, o.Obj.GetKind(), Ref(o.Obj.GetNamespace(), o.Obj.GetName()))
}

// Ref is namespace/name, or name for an object without a namespace.
func Ref(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}

// RenderSet renders the files of addons.path, in order, as Go templates over v (text/template
// and its built-in functions, nothing else), splits each into its YAML documents and returns
// the objects of the set named set. Every problem is reported, each naming its file and line:
// a template that does not parse or execute, a document that is not YAML or not a Kubernetes
// object (apiVersion, kind, metadata.name), a List, slipway's own label or annotations set by
// hand, or an object that two documents define. It reads nothing but its arguments.
func RenderSet(set string, files []File, v Values) ([]Object, error) {
	var objs []Object
	var errs []error
	seen := map[string]Object{}
	for _, f := range files {
		rendered, err := renderFile(f, v)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		fileObjs, fileErrs := parseFile(f.Name, rendered)
		errs = append(errs, fileErrs...)
		for _, o := range fileObjs {
			gvk := o.Obj.GroupVersionKind()
			id := gvk.Group + "/" + gvk.Kind + "/" + o.Obj.GetNamespace() + "/" + o.Obj.GetName()
			if first, dup := seen[id]; dup {
				errs = append(errs, fmt.Errorf("%s:%d: document %d: %s %s is also defined at %s:%d", o.File, o.Line, o.Doc, gvk.Kind,
					Ref(o.Obj.GetNamespace(), o.Obj.GetName()), first.File, first.Line))
				continue
			}
			seen[id] = o
			if err := mark(&o, set); err != nil {
				errs = append(errs, err)
				continue
			}
			objs = append(objs, o)
		}
	}
	if len(errs) > 0 {
		return nil, utilerrors.NewAggregate(errs)
	}
	return objs, nil
}

func renderFile(f File, v Values) ([]byte, error) {
	t, err := template.New(f.Name).Option("missingkey=error").Parse(string(f.Data))
	if err != nil {
		return nil, err // "template: <file>:<line>: ..."
	}
	var b bytes.Buffer
	if err := t.Execute(&b, v); err != nil {
		return nil, err // "template: <file>:<line>:<column>: executing ..."
	}
	return b.Bytes(), nil
}

// parseFile splits a rendered file into documents where a line is "---" (and blanks), as
// kubectl does, and decodes each; documents with nothing but blanks and comments are skipped.
func parseFile(name string, data []byte) ([]Object, []error) {
	var objs []Object
	var errs []error
	doc := 0
	start, line := 1, 0
	var cur []byte
	flush := func() {
		defer func() { cur = nil }()
		if !hasContent(cur) {
			return
		}
		doc++
		var m map[string]any
		if err := yaml.UnmarshalStrict(cur, &m); err != nil {
			errs = append(errs, yamlProblem(name, start, doc, err))
			return
		}
		if m == nil {
			return
		}
		o := Object{Obj: &unstructured.Unstructured{Object: m}, File: name, Doc: doc, Line: start}
		if err := checkObject(o); err != nil {
			errs = append(errs, err)
			return
		}
		objs = append(objs, o)
	}
	for _, l := range bytes.SplitAfter(data, []byte("\n")) {
		line++
		if rest, ok := bytes.CutPrefix(l, []byte("---")); ok && len(bytes.TrimSpace(rest)) == 0 {
			flush()
			start = line + 1
			continue
		}
		cur = append(cur, l...)
	}
	flush()
	return objs, errs
}

// hasContent reports whether a document has a line that is neither blank nor a comment.
func hasContent(doc []byte) bool {
	for _, l := range bytes.Split(doc, []byte("\n")) {
		if t := bytes.TrimSpace(l); len(t) > 0 && t[0] != '#' {
			return true
		}
	}
	return false
}

var yamlLine = regexp.MustCompile(`line (\d+)`)

// yamlProblem names the file and the line of a YAML error, whose own line numbers count from
// the start of the document.
func yamlProblem(name string, start, doc int, err error) error {
	msg := strings.TrimPrefix(err.Error(), "error converting YAML to JSON: ")
	at, found := start, false
	msg = yamlLine.ReplaceAllStringFunc(msg, func(m string) string {
		n, _ := strconv.Atoi(strings.TrimPrefix(m, "line "))
		abs := start + n - 1
		if !found {
			at, found = abs, true
		}
		return "line " + strconv.Itoa(abs)
	})
	return fmt.Errorf("%s:%d: document %d: %s", name, at, doc, msg)
}

func checkObject(o Object) error {
	u := o.Obj
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%s:%d: document %d: "+format, append([]any{o.File, o.Line, o.Doc}, a...)...)
	}
	apiVersion, _ := u.Object["apiVersion"].(string)
	kind, _ := u.Object["kind"].(string)
	switch {
	case apiVersion == "" || kind == "":
		return bad("not a Kubernetes object: apiVersion and kind must be set")
	case kind == "List" || strings.HasSuffix(kind, "List") && u.Object["items"] != nil:
		return bad("a %s is not applied: write its items as documents of their own", kind)
	case u.GetName() == "":
		return bad("%s has no metadata.name (generateName is not supported: the object could not be found again to change or prune it)", kind)
	}
	for _, field := range []string{"labels", "annotations"} {
		if _, _, err := unstructured.NestedStringMap(u.Object, "metadata", field); err != nil {
			return bad("metadata.%s must map strings to strings (quote numbers and booleans): %v", field, err)
		}
	}
	if _, ok := u.GetLabels()[SetLabel]; ok {
		return bad("metadata.labels[%s] is set by slipway, to the cluster's name", SetLabel)
	}
	for _, k := range []string{SourceAnnotation, HashAnnotation} {
		if _, ok := u.GetAnnotations()[k]; ok {
			return bad("metadata.annotations[%s] is set by slipway", k)
		}
	}
	return nil
}

// mark puts the set's label and the source annotation on o, then the hash of the result.
func mark(o *Object, set string) error {
	u := o.Obj
	labels := u.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[SetLabel] = set
	u.SetLabels(labels)
	annotations := u.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[SourceAnnotation] = o.File
	u.SetAnnotations(annotations)
	data, err := u.MarshalJSON()
	if err != nil {
		return fmt.Errorf("%s:%d: document %d: %w", o.File, o.Line, o.Doc, err)
	}
	sum := sha256.Sum256(data)
	o.Hash = hex.EncodeToString(sum[:])[:16]
	annotations[HashAnnotation] = o.Hash
	u.SetAnnotations(annotations)
	return nil
}
