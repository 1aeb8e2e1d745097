package plan

import (
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// accepts says in words what a field of a Go type takes.
var accepts = map[string]string{
	"int": "a whole number", "int64": "a whole number", "uint64": "a whole number, 0 or more",
	"float64": "a number", "bool": "true or false", "string": "a string",
	"[]int": "a list such as [0, 1]", "[]string": "a list such as [a, b]",
}

// typeError is the YAML decoder's "cannot unmarshal !!str `many` into int".
var typeError = regexp.MustCompile("cannot unmarshal !!(\\w+)(?: `([^`]*)`)? into (\\S+)")

// acceptedTypes rewrites the decoder's type errors as what is accepted:
// `"many" is not accepted; use a whole number`.
func acceptedTypes(s string) string {
	return typeError.ReplaceAllStringFunc(s, func(e string) string {
		m := typeError.FindStringSubmatch(e)
		what, ok := accepts[m[3]]
		if !ok {
			return e
		}
		given := m[2]
		switch {
		case m[1] == "seq":
			given = "a list"
		case m[1] == "map":
			given = "a mapping"
		case m[1] == "str" && given != "(value hidden)":
			given = strconv.Quote(given)
		}
		return given + " is not accepted; use " + what
	})
}

var lineNumber = regexp.MustCompile(`line \d+: `)

// CleanYAMLValueError is CleanYAMLError for one value whose line the
// caller names: without the decoder's own line number.
func CleanYAMLValueError(err error) string {
	return lineNumber.ReplaceAllString(CleanYAMLError(err), "")
}

// CheckWholeNumber refuses a fraction for a whole-number field (or list
// of them) of the settings type t, by YAML name, inline fields included:
// the YAML decoder would cut workers: 2.5 to 2 without a word.
func CheckWholeNumber(t reflect.Type, name string, v *yaml.Node) error {
	field, ok := yamlField(t, name)
	if !ok || reflect.PointerTo(field.Type).Implements(reflect.TypeFor[yaml.Unmarshaler]()) {
		return nil // a type that reads itself (Duration) says what it takes
	}
	ft, items := field.Type, []*yaml.Node{v}
	if ft.Kind() == reflect.Slice && v.Kind == yaml.SequenceNode {
		ft, items = ft.Elem(), v.Content
	}
	what, whole := wholeKinds[ft.Kind()]
	for _, it := range items {
		f, err := strconv.ParseFloat(it.Value, 64)
		if whole && it.ShortTag() == "!!float" && err == nil && f != math.Trunc(f) {
			return fmt.Errorf("%s is not accepted; use %s", it.Value, what)
		}
	}
	return nil
}

var wholeKinds = map[reflect.Kind]string{reflect.Int: accepts["int"], reflect.Int64: accepts["int64"], reflect.Uint64: accepts["uint64"]}

// yamlField is t's field with YAML name name, looking into inline fields.
func yamlField(t reflect.Type, name string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := strings.Split(f.Tag.Get("yaml"), ",")
		if tag[0] == name {
			return f, true
		}
		if tag[0] == "" && slices.Contains(tag[1:], "inline") && f.Type.Kind() == reflect.Struct {
			if g, ok := yamlField(f.Type, name); ok {
				return g, true
			}
		}
	}
	return reflect.StructField{}, false
}
