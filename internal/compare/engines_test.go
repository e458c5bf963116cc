package compare

import (
	"github.com/calibra-bench/calibra/internal/engine"
	_ "github.com/calibra-bench/calibra/internal/engines" // their ephemeral settings, as the runner sets them
)

func init() { EphemeralSetting = engine.Ephemeral }
