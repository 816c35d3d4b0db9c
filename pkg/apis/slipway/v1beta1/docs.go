package v1beta1

import (
	"embed"
	"go/ast"
	"go/parser"
	"go/token"
	"strings"
	"sync"
)

// The API types' source is embedded so that the reference manifest is rendered from the very
// comments that document the fields; there is no second copy to keep in sync.
//
//go:embed *_types.go
var typeSources embed.FS

var (
	docsOnce sync.Once
	docs     map[string]string // "Type.Field" (JSON name) -> doc text
)

// FieldDoc returns the documentation of a field, addressed by Go type name and JSON field name.
func FieldDoc(typeName, jsonName string) string {
	docsOnce.Do(loadDocs)
	return docs[typeName+"."+jsonName]
}

func loadDocs() {
	docs = map[string]string{}
	entries, err := typeSources.ReadDir(".")
	if err != nil {
		return
	}
	fset := token.NewFileSet()
	for _, e := range entries {
		src, err := typeSources.ReadFile(e.Name())
		if err != nil {
			continue
		}
		f, err := parser.ParseFile(fset, e.Name(), src, parser.ParseComments)
		if err != nil {
			continue
		}
		ast.Inspect(f, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok {
				return true
			}
			st, ok := ts.Type.(*ast.StructType)
			if !ok {
				return false
			}
			for _, fld := range st.Fields.List {
				if fld.Doc == nil || fld.Tag == nil {
					continue
				}
				name := jsonName(fld.Tag.Value)
				if name == "" {
					continue
				}
				docs[ts.Name.Name+"."+name] = strings.TrimSpace(fld.Doc.Text())
			}
			return false
		})
	}
}

// jsonName extracts the JSON name from a raw struct tag literal.
func jsonName(tag string) string {
	tag = strings.Trim(tag, "`")
	i := strings.Index(tag, `json:"`)
	if i < 0 {
		return ""
	}
	rest := tag[i+len(`json:"`):]
	name, _, _ := strings.Cut(rest[:strings.IndexByte(rest, '"')], ",")
	return name
}

//go:embed minimal.yaml
var minimal string

// Minimal returns a small valid manifest to start from.
func Minimal() string { return minimal }

// The shapes of cluster that Starter writes a manifest for.
const (
	ShapeSingle    = "single"
	ShapeHA        = "ha"
	ShapeOpenStack = "openstack"
)

// Shapes are the shapes Starter knows, the first the default.
var Shapes = []string{ShapeSingle, ShapeHA, ShapeOpenStack}

//go:embed starter-single.yaml
var starterSingle string

//go:embed starter-ha.yaml
var starterHA string

//go:embed starter-openstack.yaml
var starterOpenStack string

// Starter returns a commented manifest to start a cluster of the given shape from (slipway
// init): one host; three control planes behind a load balancer with static workers; or OpenStack
// with the repository's Terraform example (terraform/openstack) supplying the hosts. Each loads
// and validates, the OpenStack one with that example's outputs. ok is false for another shape.
func Starter(shape string) (manifest string, ok bool) {
	switch shape {
	case ShapeSingle:
		return starterSingle, true
	case ShapeHA:
		return starterHA, true
	case ShapeOpenStack:
		return starterOpenStack, true
	}
	return "", false
}
