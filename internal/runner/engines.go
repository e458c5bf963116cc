package runner

import (
	"fmt"
	"strings"

	"github.com/calibra-bench/calibra/internal/compare"
	"github.com/calibra-bench/calibra/internal/engine"
)

// The engines say which of their settings differ between any two runs.
func init() { compare.EphemeralSetting = engine.Ephemeral }

// EngineOption is an engine's own option (its flag and study key) and the
// engine it is of: the command line registers one flag for each.
type EngineOption = engine.EngineOption

// EngineOptions are every registered engine's own options.
func EngineOptions() []EngineOption { return engine.Options() }

// EngineNames lists the registered engines.
func EngineNames() []string { return engine.Names() }

// DefaultEngine is the engine that runs when nothing names one.
func DefaultEngine() string { return engine.Default() }

// ExampleDSN is the default engine's example DSN, for help.
func ExampleDSN() string {
	d, _ := engine.Lookup(engine.Default())
	return d.DSNExample
}

// PasswordSources says where the engines' drivers find a password
// besides the DSN, as a warning offers them: " (or, for X, ...)".
func PasswordSources() string {
	var sources []string
	for _, d := range engine.Descriptors() {
		if d.DSNPassword != "" {
			sources = append(sources, "for "+d.Title+", "+d.DSNPassword)
		}
	}
	if len(sources) == 0 {
		return ""
	}
	return " (or, " + strings.Join(sources, "; ") + ")"
}

// DSNForms are the engines' example DSNs, for help.
func DSNForms() string {
	var forms []string
	for _, d := range engine.Descriptors() {
		forms = append(forms, d.DSNExample)
	}
	return strings.Join(forms, " or ")
}

// CacheSettings names each engine's cache setting, for help.
func CacheSettings() string {
	var settings []string
	for _, d := range engine.Descriptors() {
		settings = append(settings, d.Title+" "+d.Cache.Setting)
	}
	return strings.Join(settings, ", ")
}

// ManagedDirs lists the directories of every engine's managed instances
// and what each holds, as clean's help does.
func ManagedDirs() string {
	var b strings.Builder
	for _, m := range managed() {
		fmt.Fprintf(&b, "  PATH/%s\n      %s\n", m.Dir, m.Holds)
	}
	return b.String()
}

// StandbyEngines names the engines that make standbys, for help.
func StandbyEngines() string {
	var titles []string
	for _, d := range engine.Descriptors() {
		if d.Standbys != nil {
			titles = append(titles, d.Title)
		}
	}
	return oneOf(titles)
}

// clusterTitle names the kind of the engine's clusters.
func clusterTitle(name string) string {
	if d, _ := engine.Lookup(name); d.ClusterTitle != "" {
		return d.ClusterTitle
	}
	return "cluster"
}

// oneOf lists choices as a fix offers them: "a, b or c".
func oneOf(choices []string) string {
	if len(choices) < 2 {
		return strings.Join(choices, "")
	}
	return strings.Join(choices[:len(choices)-1], ", ") + " or " + choices[len(choices)-1]
}
