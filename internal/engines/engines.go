// Package engines links every engine calibra has, with each workload's
// dialect for it; the CLI imports it once. Adding an engine adds its
// package and its dialects here.
package engines

import (
	_ "github.com/calibra-bench/calibra/internal/dss/dssmy"
	_ "github.com/calibra-bench/calibra/internal/dss/dsspg"
	_ "github.com/calibra-bench/calibra/internal/engine/mariadb"
	_ "github.com/calibra-bench/calibra/internal/engine/postgres"
	_ "github.com/calibra-bench/calibra/internal/iocal/iocalmy"
	_ "github.com/calibra-bench/calibra/internal/iocal/iocalpg"
	_ "github.com/calibra-bench/calibra/internal/observe/observemy"
	_ "github.com/calibra-bench/calibra/internal/observe/observepg"
	_ "github.com/calibra-bench/calibra/internal/oltp/oltpmy"
	_ "github.com/calibra-bench/calibra/internal/oltp/oltppg"
	_ "github.com/calibra-bench/calibra/internal/profile/profilemy"
	_ "github.com/calibra-bench/calibra/internal/profile/profilepg"
	_ "github.com/calibra-bench/calibra/internal/replay/replaymy"
	_ "github.com/calibra-bench/calibra/internal/replay/replaypg"
)
