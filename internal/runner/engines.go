package runner

import (
	"strings"

	"github.com/calibra-bench/calibra/internal/engine"
)

// EngineOption is an engine's own option (its flag and study key) and the
// engine it is of: the command line registers one flag for each.
type EngineOption = engine.EngineOption

// EngineOptions are every registered engine's own options.
func EngineOptions() []EngineOption { return engine.Options() }

// EngineNames lists the registered engines.
func EngineNames() []string { return engine.Names() }

// DefaultEngine is the engine that runs when nothing names one.
func DefaultEngine() string { return engine.Default() }

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

// oneOf lists choices as a fix offers them: "a, b or c".
func oneOf(choices []string) string {
	if len(choices) < 2 {
		return strings.Join(choices, "")
	}
	return strings.Join(choices[:len(choices)-1], ", ") + " or " + choices[len(choices)-1]
}
