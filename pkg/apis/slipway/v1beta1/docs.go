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
