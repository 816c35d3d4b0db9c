package v1beta1

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Reference renders the fully commented reference manifest: every field of the API with its
// documentation as a YAML comment. Alternatives that are not chosen (for example the CNI
// plugins other than flannel) are shown commented out, so the output loads as a valid manifest.
func Reference() string {
	var b strings.Builder
	b.WriteString("# slipway cluster manifest: every field, with its documentation.\n")
	b.WriteString("# Fields that Terraform output usually supplies (hosts, apiEndpoint) are filled with examples.\n")
	b.WriteString("# Commented-out blocks are alternatives or optional settings.\n")
	p := &printer{b: &b}
	p.object(reflect.ValueOf(referenceCluster()), 0, false)
	return b.String()
}

type printer struct {
	b *strings.Builder
	// sampling holds the types whose sample is being printed, so that a recursive type (a
	// bastion behind a bastion) is shown once rather than forever.
	sampling map[reflect.Type]bool
}

func (p *printer) line(indent int, commented bool, s string) {
	p.b.WriteString(strings.Repeat("  ", indent))
	if commented {
		p.b.WriteString("# ")
	}
	p.b.WriteString(s)
	p.b.WriteString("\n")
}

func (p *printer) comment(indent int, commented bool, text string) {
	for _, l := range strings.Split(text, "\n") {
		p.line(indent, commented, strings.TrimRight("# "+l, " "))
	}
}

// object prints the fields of struct v, each preceded by its documentation.
func (p *printer) object(v reflect.Value, indent int, commented bool) {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		if d := FieldDoc(t.Name(), name); d != "" {
			p.comment(indent, commented, d)
		}
		p.field(name, v.Field(i), indent, commented)
	}
}

func (p *printer) field(name string, v reflect.Value, indent int, commented bool) {
	key := scalarText(name)
	// A nil pointer is an unchosen alternative or an unset option: show a sample, commented out.
	if v.Kind() == reflect.Pointer && v.IsNil() {
		if p.sampling[v.Type().Elem()] {
			p.line(indent, true, key+": ...")
			return
		}
		sample := sampleFor(v.Type().Elem())
		if sample.Kind() == reflect.Struct && !isScalarType(sample.Type()) {
			if sample.NumField() == 0 {
				p.line(indent, true, key+": {}")
				return
			}
			p.line(indent, true, key+":")
			if p.sampling == nil {
				p.sampling = map[reflect.Type]bool{}
			}
			p.sampling[sample.Type()] = true
			p.object(sample, indent+1, true)
			delete(p.sampling, sample.Type())
			return
		}
		p.line(indent, true, key+": "+scalarText(sample.Interface()))
		return
	}
	if v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	switch {
	case isScalarType(v.Type()):
		p.line(indent, commented, key+": "+scalarText(v.Interface()))
	case v.Kind() == reflect.Struct:
		if v.NumField() == 0 {
			p.line(indent, commented, key+": {}")
			return
		}
		p.line(indent, commented, key+":")
		p.object(v, indent+1, commented)
	case v.Kind() == reflect.Map:
		if v.Len() == 0 {
			p.line(indent, commented, key+": {}")
			return
		}
		p.line(indent, commented, key+":")
		keys := v.MapKeys()
		sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
		for _, k := range keys {
			p.field(k.String(), v.MapIndex(k), indent+1, commented)
		}
	case v.Kind() == reflect.Slice:
		if v.Len() == 0 {
			p.line(indent, commented, key+": []")
			return
		}
		p.line(indent, commented, key+":")
		for i := 0; i < v.Len(); i++ {
			item := v.Index(i)
			if isScalarType(item.Type()) {
				p.line(indent+1, commented, "- "+scalarText(item.Interface()))
				continue
			}
			p.line(indent+1, commented, "-")
			p.object(item, indent+2, commented)
		}
	default:
		p.line(indent, commented, key+": "+scalarText(v.Interface()))
	}
}

func isScalarType(t reflect.Type) bool {
	if t == reflect.TypeFor[intstr.IntOrString]() {
		return true
	}
	switch t.Kind() {
	case reflect.String, reflect.Bool, reflect.Int, reflect.Int32, reflect.Int64, reflect.Float64:
		return true
	}
	return false
}

// scalarText renders a scalar as YAML, quoting where YAML needs it.
func scalarText(v any) string {
	if ios, ok := v.(intstr.IntOrString); ok {
		raw, _ := json.Marshal(ios)
		var x any
		_ = json.Unmarshal(raw, &x)
		v = x
	}
	out, err := yaml.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%q", fmt.Sprint(v))
	}
	return strings.TrimSuffix(string(out), "\n")
}

// sampleFor returns an example value for an unset optional field of type t.
func sampleFor(t reflect.Type) reflect.Value {
	if s, ok := samples[t]; ok {
		return reflect.ValueOf(s)
	}
	return reflect.Zero(t)
}
