// Package examples holds the built-in studies (the presets of `calibra run
// --preset`), each an example study file a user can copy and change.
package examples

import (
	"embed"
	"path"
	"slices"
	"strings"
)

//go:embed *.yaml
var files embed.FS

// Names lists the presets in the order the help shows them.
func Names() []string {
	entries, _ := files.ReadDir(".")
	var names []string
	for _, e := range entries {
		names = append(names, strings.TrimSuffix(e.Name(), path.Ext(e.Name())))
	}
	order := []string{"quick", "iometer", "pts", "calibrate", "peak-sto", "tprocc", "bmf-ramp", "tproch", "full"}
	slices.SortStableFunc(names, func(a, b string) int { return rank(order, a) - rank(order, b) })
	return names
}

func rank(order []string, name string) int {
	if i := slices.Index(order, name); i >= 0 {
		return i
	}
	return len(order)
}

// Study returns a preset's study file.
func Study(name string) ([]byte, bool) {
	data, err := files.ReadFile(name + ".yaml")
	return data, err == nil
}

// Summary is a preset's first line, its one-line description.
func Summary(name string) string {
	data, _ := Study(name)
	first, _, _ := strings.Cut(string(data), "\n")
	return strings.TrimSpace(strings.TrimPrefix(first, "#"))
}
