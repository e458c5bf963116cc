package results

import (
	"fmt"

	"github.com/calibra-bench/calibra/internal/fault"
)

// MaxLabel bounds a label as a default run directory's name holds it
// (LabelName): with the start time before it (16 bytes and '_'), a
// "-merged" and a "-NN" after it, the name stays well under NAME_MAX (255
// bytes), so a run directory can always be made.
const MaxLabel = 200

// LabelName is label as DefaultPath writes it into a run directory's name:
// every run of characters other than letters, digits, '.', '_' and '-'
// becomes one '-'.
func LabelName(label string) string {
	return unsafeLabel.ReplaceAllString(label, "-")
}

// CheckLabel refuses, in one sentence, a label (named by flag, such as
// "--label") that a run directory's name cannot hold.
func CheckLabel(flag, label string) error {
	if n := len(LabelName(label)); n > MaxLabel {
		return fault.Input(fmt.Sprintf("give a label of at most %d letters, digits, '.', '_' or '-'", MaxLabel),
			"%s is %d bytes long as a run directory's name holds it, more than the %d a name has room for", flag, n, MaxLabel)
	}
	return nil
}
