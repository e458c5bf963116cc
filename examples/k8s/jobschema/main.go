// Command jobschema writes the fields of a Kubernetes batch/v1 Job, as
// k8s.io/api defines them, for examples/k8s_test.go: the test checks the
// example's every key against them without compiling k8s.io/api, whose
// compile cost a fresh machine some 21 CPU-seconds of the test line.
//
// Run it from this directory after changing the k8s.io/api version:
//
//	go run . > ../../testdata/k8s-job-fields.json
package main

import (
	"encoding"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"runtime/debug"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
)

// schema is the file's content: the root object and every object it
// reaches, each its fields by JSON name and their types. A type is an
// object's name, "[]T" (an array of T), "map[]T" (an object of T's by any
// key), "string", "integer", "number", "boolean", or "scalar": a type with
// a text form of its own (a quantity, a time, an int-or-string).
type schema struct {
	Source  string                       `json:"source"`
	Root    string                       `json:"root"`
	Objects map[string]map[string]string `json:"objects"`
}

func main() {
	s := schema{Source: "k8s.io/api " + version("k8s.io/api"), Objects: map[string]map[string]string{}}
	s.Root = add(s.Objects, reflect.TypeFor[batchv1.Job]())
	out, err := json.MarshalIndent(s, "", " ")
	if err != nil {
		fmt.Fprintln(os.Stderr, "jobschema:", err)
		os.Exit(1)
	}
	os.Stdout.Write(append(out, '\n'))
}

func version(module string) string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, d := range info.Deps {
			if d.Path == module {
				return d.Version
			}
		}
	}
	return "(unknown version)"
}

var textual = []reflect.Type{reflect.TypeFor[json.Marshaler](), reflect.TypeFor[encoding.TextMarshaler]()}

// add records t and what it reaches, and returns its name in types.
func add(objects map[string]map[string]string, t reflect.Type) string {
	for _, m := range textual {
		if t.Implements(m) || reflect.PointerTo(t).Implements(m) {
			return "scalar"
		}
	}
	switch t.Kind() {
	case reflect.Pointer:
		return add(objects, t.Elem())
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return "string" // base64
		}
		return "[]" + add(objects, t.Elem())
	case reflect.Map:
		return "map[]" + add(objects, t.Elem())
	case reflect.Struct:
		name := strings.TrimPrefix(t.PkgPath(), "k8s.io/") + "." + t.Name()
		if _, ok := objects[name]; !ok {
			objects[name] = map[string]string{}
			fields(objects, t, objects[name])
		}
		return name
	}
	panic(fmt.Sprintf("jobschema: no JSON form for %s", t))
}

// fields adds t's JSON fields to into, an inlined struct's among them.
func fields(objects map[string]map[string]string, t reflect.Type, into map[string]string) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case tag == "-" || !f.IsExported():
		case f.Anonymous && (tag == "" || strings.Contains(f.Tag.Get("json"), "inline")):
			fields(objects, f.Type, into)
		case tag == "":
			into[f.Name] = add(objects, f.Type)
		default:
			into[tag] = add(objects, f.Type)
		}
	}
}
