package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/calibra-bench/calibra/internal/safefs"
	"github.com/calibra-bench/calibra/internal/secret"
)

// warnExposed says, in one line on w, that the DSN file at path (what
// names it: "--dsn-file F", "target.dsn_file F") can be read by other
// accounts than its owner's, and how to fix it; the run goes on. An
// empty or unreadable file is refused elsewhere, so it says nothing then.
func warnExposed(w io.Writer, path, what string) {
	mode, exposed := secret.Exposed(path)
	if !exposed || safefs.IsStdin(path) {
		return
	}
	// Through the one reader: a FIFO, a device or a kernel file is not
	// waited on here, and runner.ReadDSN refuses it.
	if data, err := safefs.ReadInput(context.Background(), path, safefs.MaxSecretBytes, nil); err != nil || strings.TrimSpace(string(data)) == "" {
		return
	}
	fmt.Fprintf(w, "calibra: warning: %s is readable by its group or others (mode %04o), and its DSN may hold a password; chmod 600 %s\n", what, mode, path)
}
