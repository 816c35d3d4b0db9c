package strict

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	rawMessageType  = reflect.TypeFor[json.RawMessage]()
)

type walker struct {
	nodes int
}

func at(n *yaml.Node) string { return fmt.Sprintf("line %d", n.Line) }

// walk checks n against type t and returns the JSON-ready value for it.
func (w *walker) walk(n *yaml.Node, t reflect.Type, path *field.Path, depth int) (any, field.ErrorList) {
	w.nodes++
	if w.nodes > maxNodes {
		return nil, field.ErrorList{field.Invalid(path, nil, "document is too large or has too many aliases")}
	}
	if depth > maxDepth {
		return nil, field.ErrorList{field.Invalid(path, nil, "document is nested too deeply")}
	}
	if n.Kind == yaml.AliasNode {
		if n.Alias == nil {
			return nil, field.ErrorList{field.Invalid(path, nil, at(n)+": unresolved alias")}
		}
		return w.walk(n.Alias, t, path, depth+1)
	}
	if isNull(n) {
		return nil, nil
	}
	if t.Kind() == reflect.Pointer {
		return w.walk(n, t.Elem(), path, depth)
	}
	// Types that decode themselves (IntOrString, Quantity) take a scalar; json checks the rest.
	if t != rawMessageType && reflect.PointerTo(t).Implements(jsonUnmarshaler) {
		if n.Kind != yaml.ScalarNode {
			return nil, field.ErrorList{field.TypeInvalid(path, kindName(n), at(n)+": must be a single value")}
		}
		return scalar(n), nil
	}
	switch t.Kind() {
	case reflect.Interface:
		return w.any(n, path, depth)
	case reflect.Slice:
		if t == rawMessageType {
			return w.any(n, path, depth)
		}
		return w.slice(n, t, path, depth)
	case reflect.Map:
		return w.mapping(n, t, path, depth)
	case reflect.Struct:
		return w.object(n, t, path, depth)
	case reflect.String:
		if n.Kind != yaml.ScalarNode || n.Tag != "!!str" {
			return nil, field.ErrorList{field.TypeInvalid(path, display(n), at(n)+": must be a string (put quotes around it)")}
		}
		return n.Value, nil
	case reflect.Bool:
		if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" {
			return nil, field.ErrorList{field.TypeInvalid(path, display(n), at(n)+": must be true or false")}
		}
		return n.Value == "true" || n.Value == "True" || n.Value == "TRUE", nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return integer(n, t, path)
	case reflect.Float32, reflect.Float64:
		if n.Kind != yaml.ScalarNode || (n.Tag != "!!int" && n.Tag != "!!float") {
			return nil, field.ErrorList{field.TypeInvalid(path, display(n), at(n)+": must be a number")}
		}
		f, err := strconv.ParseFloat(n.Value, 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, field.ErrorList{field.TypeInvalid(path, display(n), at(n)+": must be a finite number")}
		}
		return f, nil
	}
	return nil, field.ErrorList{field.InternalError(path, fmt.Errorf("unsupported Go type %s", t))}
}

func integer(n *yaml.Node, t reflect.Type, path *field.Path) (any, field.ErrorList) {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!int" {
		return nil, field.ErrorList{field.TypeInvalid(path, display(n), at(n)+": must be a whole number")}
	}
	bits := t.Bits()
	switch t.Kind() {
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v, err := strconv.ParseUint(strings.ReplaceAll(n.Value, "_", ""), 0, bits)
		if err != nil {
			return nil, field.ErrorList{field.Invalid(path, n.Value, at(n)+fmt.Sprintf(": must be a whole number from 0 to %d", uint64(1<<bits-1)))}
		}
		return v, nil
	}
	v, err := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 0, bits)
	if err != nil {
		return nil, field.ErrorList{field.Invalid(path, n.Value, at(n)+fmt.Sprintf(": must be a whole number that fits in %d bits", bits))}
	}
	return v, nil
}

func (w *walker) slice(n *yaml.Node, t reflect.Type, path *field.Path, depth int) (any, field.ErrorList) {
	if n.Kind != yaml.SequenceNode {
		return nil, field.ErrorList{field.TypeInvalid(path, kindName(n), at(n)+": must be a list")}
	}
	out := make([]any, 0, len(n.Content))
	var errs field.ErrorList
	for i, item := range n.Content {
		v, e := w.walk(item, t.Elem(), path.Index(i), depth+1)
		errs = append(errs, e...)
		out = append(out, v)
	}
	return out, errs
}

func (w *walker) mapping(n *yaml.Node, t reflect.Type, path *field.Path, depth int) (any, field.ErrorList) {
	if n.Kind != yaml.MappingNode {
		return nil, field.ErrorList{field.TypeInvalid(path, kindName(n), at(n)+": must be a mapping")}
	}
	if t.Key().Kind() != reflect.String {
		return nil, field.ErrorList{field.InternalError(path, fmt.Errorf("map key type %s", t.Key()))}
	}
	out := map[string]any{}
	var errs field.ErrorList
	err := pairs(n, func(k, v *yaml.Node) {
		if _, dup := out[k.Value]; dup {
			errs = append(errs, field.Duplicate(path.Key(k.Value), k.Value+" ("+at(k)+")"))
			return
		}
		val, e := w.walk(v, t.Elem(), path.Key(k.Value), depth+1)
		errs = append(errs, e...)
		out[k.Value] = val
	})
	return out, append(errs, err(path)...)
}

func (w *walker) object(n *yaml.Node, t reflect.Type, path *field.Path, depth int) (any, field.ErrorList) {
	if n.Kind != yaml.MappingNode {
		return nil, field.ErrorList{field.TypeInvalid(path, kindName(n), at(n)+": must be a mapping of fields")}
	}
	fields := jsonFields(t)
	out := map[string]any{}
	var errs field.ErrorList
	err := pairs(n, func(k, v *yaml.Node) {
		ft, ok := fields[k.Value]
		if !ok {
			errs = append(errs, field.Forbidden(path.Child(k.Value), unknownDetail(k, fields)))
			return
		}
		if _, dup := out[k.Value]; dup {
			errs = append(errs, field.Duplicate(path.Child(k.Value), k.Value+" ("+at(k)+")"))
			return
		}
		val, e := w.walk(v, ft, path.Child(k.Value), depth+1)
		errs = append(errs, e...)
		out[k.Value] = val
	})
	return out, append(errs, err(path)...)
}

// any converts a free-form subtree, still rejecting duplicate keys.
func (w *walker) any(n *yaml.Node, path *field.Path, depth int) (any, field.ErrorList) {
	switch n.Kind {
	case yaml.ScalarNode:
		return scalar(n), nil
	case yaml.SequenceNode:
		return w.slice(n, reflect.TypeFor[[]any](), path, depth)
	case yaml.MappingNode:
		return w.mapping(n, reflect.TypeFor[map[string]any](), path, depth)
	}
	return nil, nil
}

// pairs calls fn for each key/value of a mapping whose keys are strings, and returns a function
// that reports the keys that were not.
func pairs(n *yaml.Node, fn func(k, v *yaml.Node)) func(*field.Path) field.ErrorList {
	var bad []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode || k.Tag == "!!merge" {
			bad = append(bad, k)
			continue
		}
		fn(k, v)
	}
	return func(path *field.Path) field.ErrorList {
		var errs field.ErrorList
		for _, k := range bad {
			detail := at(k) + ": keys must be plain names"
			if k.Tag == "!!merge" {
				detail = at(k) + ": YAML merge keys (<<) are not supported; repeat the fields"
			}
			errs = append(errs, field.Invalid(path, k.Value, detail))
		}
		return errs
	}
}

// jsonFields maps JSON names to field types, following encoding/json's rules for embedded
// structs.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				for k, v := range jsonFields(ft) {
					if _, ok := out[k]; !ok {
						out[k] = v
					}
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}

func unknownDetail(k *yaml.Node, fields map[string]reflect.Type) string {
	msg := at(k) + ": unknown field"
	best, bestD := "", 3
	names := make([]string, 0, len(fields))
	for name := range fields {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if d := distance(strings.ToLower(k.Value), strings.ToLower(name)); d < bestD {
			best, bestD = name, d
		}
	}
	if best != "" {
		msg += fmt.Sprintf(", did you mean %q?", best)
	}
	return msg
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

func scalar(n *yaml.Node) any {
	switch n.Tag {
	case "!!int":
		if v, err := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 0, 64); err == nil {
			return v
		}
	case "!!float":
		if f, err := strconv.ParseFloat(n.Value, 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
			return f
		}
	case "!!bool":
		return n.Value == "true" || n.Value == "True" || n.Value == "TRUE"
	case "!!null":
		return nil
	}
	return n.Value
}

func display(n *yaml.Node) any {
	if n.Kind == yaml.ScalarNode {
		return n.Value
	}
	return kindName(n)
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "<mapping>"
	case yaml.SequenceNode:
		return "<list>"
	}
	return n.Value
}

// distance is the Levenshtein distance, for "did you mean" suggestions.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
